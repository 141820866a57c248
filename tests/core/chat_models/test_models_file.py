"""The admin's models file: the documented example loads as written; a syntax error stops the
start with one line naming the line; an edit while running is reloaded, and a broken one refused
with the old list kept; no file leaves the configured model alone; prices and who may use each."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.chat_models import ModelBook, parse_models
from bot.core.errors import ConfigError
from bot.wiring.models import ModelFile
from tests.core.personas.test_personas_file import touched
from tests.support.chat_models import BOOK, MODELS

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "models.example.toml"
PERSONAS_EXAMPLE = EXAMPLE.with_name("personas.example.toml")


def test_the_documented_example_loads_as_written() -> None:
    book = parse_models(EXAMPLE.read_text(encoding="utf-8"), str(EXAMPLE))
    assert book.names == ("smollm2", "smollm2-1.7b", "gpt-4o-mini", "llava") and book.default == "smollm2"
    assert (
        book.currency == "USD" and book.price("gpt-4o-mini") == (0.15, 0.6) and book.price("smollm2") is None
    )
    remote = book.find("gpt-4o-mini")
    assert remote is not None and remote.api_key_env == "OPENAI_API_KEY" and remote.vision
    assert remote.who == "admins" and book.find("llava") is not None
    # The personas example's default model for `tutor` is one this list names.
    assert 'model = "smollm2-1.7b"' in PERSONAS_EXAMPLE.read_text(encoding="utf-8")


def test_prices_who_and_the_default() -> None:
    assert BOOK.price("big") == (0.5, 1.5) and BOOK.price("secret") is None and BOOK.price("nope") is None
    assert BOOK.currency == "EUR" and BOOK.default_model == BOOK.find("small")
    assert [m.name for m in BOOK.usable("telegram:4242", admin=False)] == ["small", "big", "secret"]
    assert [m.name for m in BOOK.usable("telegram:7", admin=False)] == ["small", "big"]
    assert [m.name for m in BOOK.usable("telegram:7", admin=True)] == ["small", "big", "secret", "boss"]


def test_a_syntax_error_at_start_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text('[[model]]\nname = "small"\nbackend = "local\n', encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        ModelFile(path)
    message = str(raised.value)
    assert str(path) in message and "line 3" in message and "\n" not in message


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[model]]\nname = "Big One"\nbackend = "local"\nmodel = "x"\n', "one lower-case word"),
        ('[[model]]\nname = "a"\nbackend = "cloud"\nmodel = "x"\n', 'backend must be "local" or "openai"'),
        ('[[model]]\nname = "a"\nbackend = "local"\n', "has no model"),
        ('[[model]]\nname = "a"\nbackend = "openai"\nmodel = "x"\n', "needs url"),
        ('[[model]]\nname = "a"\nbackend = "openai"\nurl = "http://h/v1"\nmodel = "x"\napi_key = "sk-1"\n',
         "never written in this file"),
        ('[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\nprice_in = 1\n', "give both"),
        ('[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\nprice_in = 1\nprice_out = 2\n', "currency"),
        ('[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\nprice_in = -1\nprice_out = 2\n',
         "0 or more"),
        ('[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\nwho = "friends"\n', "who must be"),
        ('[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\nwho = "admins"\n', "must be for everyone"),
        ('[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\ncontext = 12\n', "context must be"),
        ('[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\n[[model]]\nname = "a"\nbackend = "local"\n'
         'model = "y"\n', "used twice"),
        ('default = "b"\n[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\n', "names no model"),
        ('[[model]]\nname = "a"\nbackend = "local"\nmodel = "x"\ncolour = "red"\n', "unknown key 'colour'"),
        ("title = 'x'\n[[model]]\nname = 'a'\nbackend = 'local'\nmodel = 'x'\n", "unknown key 'title'"),
        ("currency = 'USD'\n", "no models"),
    ],
)  # fmt: skip
def test_a_file_that_parses_but_is_wrong_says_what(text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        parse_models(text)


def test_a_key_in_the_file_is_never_repeated_in_the_error() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_models('[[model]]\nname = "a"\nbackend = "openai"\nurl = "http://h/v1"\nmodel = "x"\n'
                     'api_key = "sk-secret-123456"\n')  # fmt: skip
    assert "sk-secret" not in str(raised.value)


def test_no_file_leaves_the_configured_model_alone(tmp_path: Path) -> None:
    book = ModelFile(tmp_path / "models.toml").book()
    assert book == ModelBook() and book.names == () and book.price("small") is None


def test_an_edit_is_reloaded_and_a_broken_edit_refused_with_the_old_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "models.toml"
    touched(path, MODELS, 0)
    models = ModelFile(path)
    assert models.book().names == ("small", "big", "secret", "boss")
    touched(path, MODELS + '\n[[model]]\nname = "tiny"\nbackend = "local"\nmodel = "HuggingFaceTB/x"\n', 1)
    assert models.book().names == ("small", "big", "secret", "boss", "tiny")
    touched(path, MODELS + "\n[[model]\nname = ", 2)  # an editor's half-written save
    assert models.book().names == ("small", "big", "secret", "boss", "tiny")
    assert any("edit is refused" in record.getMessage() for record in caplog.records)
    touched(path, MODELS.replace("price_in = 0.5", "price_in = 0.25"), 3)
    assert models.book().names == ("small", "big", "secret", "boss") and models.book().price("big") == (
        0.25,
        1.5,
    )
