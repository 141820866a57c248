"""`kindred memory import`: Telegram Desktop exports and the progress bar, on both stores, with the
real embedder (the default runtime)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.cli.memory import ImportProgress
from tests.support.telegram_export import ME, account_export, chat_export

pytestmark = pytest.mark.usefixtures("kindred_env")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def import_telegram(capsys: pytest.CaptureFixture[str], export: Path, *flags: str) -> tuple[int, str, str]:
    return run(capsys, "memory", "import", "--user", "ann", "--format", "telegram", *flags, str(export))


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_telegram_chat_seeds_the_persons_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = write(tmp_path / "result.json", chat_export())
    code, _, err = import_telegram(capsys, export, "--me", ME)
    assert code == 0, err
    assert f"imported 3 memories for ann (Telegram messages of {ME}, skipped 1 service" in err
    assert "\r" not in err  # not a terminal: no progress bar

    code, out, _ = run(capsys, "memory", "search", "--user", "ann", "--k", "1", "--json", "my dog's name?")
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["text"] == "I just adopted a dog called Biscuit 🐶"
    assert row["meta"] == {"source": "telegram", "chat": "Mia", "message_id": 1}
    assert row["timestamp"] == "2023-11-14T22:14:20+00:00"

    code, out, _ = run(capsys, "memory", "list", "--user", "ann", "--json")
    assert {json.loads(line)["speaker"] for line in out.splitlines()} == {"user"}


def test_an_account_export_needs_no_me_and_others_come_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = write(tmp_path / "result.json", account_export())
    code, _, err = import_telegram(capsys, export, "--others")
    assert code == 0 and "imported 7 memories" in err, err
    _, out, _ = run(capsys, "memory", "list", "--user", "ann", "--json")
    assert {json.loads(line)["speaker"] for line in out.splitlines()} == {"user", "Mia", "Sam"}


@pytest.mark.parametrize(
    ("content", "flags", "message"),
    [
        (b'{"messages": [', (), "not a Telegram export: invalid JSON"),
        (b'{"name": "a chat"}', (), "not a Telegram export: no `messages` list"),
        (json.dumps(chat_export()).encode(), (), "name yourself with --me"),
        (json.dumps({"messages": [{"type": "service"}]}).encode(), ("--me", ME), "no messages to import"),
    ],
)
def test_a_bad_export_is_one_line_and_imports_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, flags: tuple[str, ...], message: str
) -> None:
    export = tmp_path / "result.json"
    export.write_bytes(content)
    code, _, err = import_telegram(capsys, export, *flags)
    assert code != 0 and message in err, err
    assert len(err.strip().splitlines()) == 1
    assert run(capsys, "memory", "export", "--user", "ann")[1] == ""


def test_a_huge_export_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.importers import telegram_export

    monkeypatch.setattr(telegram_export, "MAX_EXPORT_BYTES", 100)
    export = write(tmp_path / "result.json", chat_export())
    code, _, err = import_telegram(capsys, export, "--me", ME)
    assert code != 0 and "the limit is" in err and "export one chat at a time" in err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_draws_on_a_terminal_only() -> None:
    screen = Terminal()
    bar = ImportProgress.on_terminal(screen)
    bar(256, 1024)
    bar(1024, 1024)
    bar.finish()
    drawn = screen.getvalue()
    assert drawn.startswith("\r[" + "#" * 7) and "1,024/1,024" in drawn and drawn.endswith("\n")
    piped = io.StringIO()
    quiet = ImportProgress.on_terminal(piped)
    quiet(5, 10)
    quiet.finish()
    assert piped.getvalue() == "" and quiet.done == 5
