"""The admin's personas file: the documented example loads as written; a syntax error stops the
start with one line naming the line; an edit while running is reloaded, and a broken one refused
with the old personas kept; no file leaves KINDRED_PERSONA alone, as before personas existed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.core.errors import ConfigError
from bot.core.personas import DEFAULT_NAME, parse_personas
from bot.wiring.personas import PersonaFile

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "personas.example.toml"
TWO = """
[[persona]]
name = "kindred"
prompt = "You are Kindred."

[[persona]]
name = "coach"
prompt = "You are a coach."
greeting = "Coach here."
"""


def touched(path: Path, text: str, step: int) -> None:
    """Write `text` and move the modification time on: two writes within the clock's grain
    would otherwise look like one."""
    path.write_text(text, encoding="utf-8")
    stamp = path.stat().st_mtime_ns + step * 1_000_000_000
    os.utime(path, ns=(stamp, stamp))


def test_the_documented_example_loads_as_written() -> None:
    book = parse_personas(EXAMPLE.read_text(encoding="utf-8"), str(EXAMPLE))
    assert book.names == ("kindred", "coach", "tutor") and book.default == "kindred"
    coach = book.find("Coach")
    assert coach is not None and coach.voice == "en-gb" and coach.greeting.startswith("Coach here")
    assert book.find("tutor") is not None and book.current("tutor").model == "smollm2-1.7b"


def test_a_syntax_error_at_start_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "personas.toml"
    path.write_text('[[persona]]\nname = "kindred"\nprompt = "unclosed\n', encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        PersonaFile(path, "fallback")
    message = str(raised.value)
    assert str(path) in message and "line 3" in message and "\n" not in message


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[persona]]\nname = "Bad Name"\nprompt = "x"\n', "one lower-case word"),
        ('[[persona]]\nname = "a"\n', "has no prompt"),
        ('[[persona]]\nname = "a"\nprompt = "x"\n[[persona]]\nname = "a"\nprompt = "y"\n', "used twice"),
        ('default = "b"\n[[persona]]\nname = "a"\nprompt = "x"\n', "names no persona"),
        ('[[persona]]\nname = "a"\nprompt = "x"\ncolour = "red"\n', "unknown key 'colour'"),
        ("title = 'nothing'\n", "no personas"),
    ],
)
def test_a_file_that_parses_but_is_wrong_says_what(text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        parse_personas(text)


def test_no_file_leaves_kindred_persona_alone(tmp_path: Path) -> None:
    book = PersonaFile(tmp_path / "personas.toml", "You are the admin's Kindred.").book()
    assert book.names == (DEFAULT_NAME,) and book.current(None).prompt == "You are the admin's Kindred."


def test_an_edit_is_reloaded_and_a_broken_edit_refused_with_the_old_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "personas.toml"
    touched(path, TWO, 0)
    personas = PersonaFile(path, "fallback")
    assert personas.book().names == ("kindred", "coach")
    touched(path, TWO + '\n[[persona]]\nname = "tutor"\nprompt = "You teach."\n', 1)
    assert personas.book().names == ("kindred", "coach", "tutor")
    touched(path, TWO + "\n[[persona]\nname = ", 2)  # an editor's half-written save
    assert personas.book().names == ("kindred", "coach", "tutor")
    assert any("edit is refused" in record.getMessage() for record in caplog.records)
    touched(path, TWO, 3)
    assert personas.book().names == ("kindred", "coach")
