"""A chat's /export, and `kindred memory export`, read back by `kindred memory import` on both
stores: the memories come back, the settings and usage lines are counted and kept aside (an
import restores memories only), and an export written before those lines existed imports as it
did. The real entry point and the real MiniLM embedder (`kindred_env`)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.core.memory.controls import Controls
from bot.core.memory.jsonl_format import RECORD_KEY
from bot.core.usage import UsageRecord
from bot.wiring.backends import open_store
from bot.wiring.settings import load_settings

pytestmark = pytest.mark.usefixtures("kindred_env")

ANN, CAROL = "telegram:1", "telegram:3"
SAID: list[dict[str, object]] = [
    {"text": "My sister Mira lives in Lisbon", "speaker": "user", "timestamp": "2026-11-02T08:15:00+00:00"},
    {"text": "I switched to decaf in November", "speaker": "user", "timestamp": "2026-11-20T19:00:00+00:00"},
]
AT = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


async def choose_and_use() -> bytes:
    """Ann's persona, spoken replies and training choice, and two uses; then her chat /export."""
    store = await open_store(load_settings(env_file=None))
    try:
        await store.personas.choose(ANN, "coach", ANN)
        await store.turns.set_spoken_replies(ANN, True)
        await store.learning.set_training_consent(ANN, False)
        await store.usage.record(UsageRecord(ANN, "reply", AT, 812, 240))
        await store.usage.record(UsageRecord(ANN, "voice_seconds", AT, amount=4.5, group_id="telegram:-100"))
        return await Controls(store, "p").export_jsonl(ANN)
    finally:
        await store.close()


async def carols_settings() -> tuple[str | None, bool | None, list[UsageRecord]]:
    store = await open_store(load_settings(env_file=None))
    try:
        return (
            await store.personas.chosen(CAROL),
            await store.learning.training_consent(CAROL),
            await store.usage.records(CAROL),
        )
    finally:
        await store.close()


def test_an_export_with_settings_and_usage_imports_its_memories_and_keeps_the_rest_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write(tmp_path / "old.jsonl", SAID)  # as every export was before settings were in it
    code, _, err = run(capsys, "memory", "import", "--user", ANN, str(old))
    assert code == 0 and f"imported 2 memories for {ANN}\n" in err and "kept aside" not in err, err

    chat_export = tmp_path / "chat.jsonl"
    chat_export.write_bytes(asyncio.run(choose_and_use()))
    kinds = [json.loads(line).get(RECORD_KEY) for line in chat_export.read_text().splitlines()]
    assert kinds == [None, None, "setting", "setting", "setting", "usage", "usage"]
    code, _, err = run(capsys, "memory", "import", "--user", CAROL, str(chat_export))
    assert code == 0, err
    assert (
        f"imported 2 memories for {CAROL}, kept aside 3 setting and 2 usage lines "
        "(not memories: an import restores memories only)"
    ) in err
    _, out, _ = run(capsys, "memory", "list", "--user", CAROL, "--json")
    assert [json.loads(line)["text"] for line in out.splitlines()] == [line["text"] for line in SAID]
    assert asyncio.run(carols_settings()) == (None, None, [])  # settings are not restored

    # The admin's export holds the same lines, and imports the same way.
    code, out, _ = run(capsys, "memory", "export", "--user", ANN)
    exported = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [line for line in exported if RECORD_KEY in line] == [
        line
        for line in (json.loads(raw) for raw in chat_export.read_text().splitlines())
        if RECORD_KEY in line
    ]
    again = tmp_path / "admin.jsonl"
    again.write_text(out, encoding="utf-8")
    code, _, err = run(capsys, "memory", "import", "--user", "telegram:4", str(again))
    assert code == 0 and "imported 2 memories for telegram:4, kept aside 3 setting and 2 usage lines" in err


def test_a_record_line_that_names_no_kind_is_an_invalid_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path / "bad.jsonl", [*SAID, {"record": 7, "text": "not a memory either"}])
    code, _, err = run(capsys, "memory", "import", "--user", ANN, str(bad))
    assert code == 1 and "line 3: `record` must be a string" in err
    future = write(tmp_path / "later.jsonl", [*SAID, {"record": "budget", "day": 12}])  # a later kind
    code, _, err = run(capsys, "memory", "import", "--user", ANN, str(future))
    assert code == 0 and "imported 2 memories" in err and "kept aside 1 budget lines" in err, err
