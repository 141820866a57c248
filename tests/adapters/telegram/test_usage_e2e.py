"""/usage on Telegram, end to end: the real python-telegram-bot against the loopback Bot API, the
real conversation and SQLite store. What the person is told is what `kindred usage --json` prints
for them, read by the CLI (a process of its own) from the same database file."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from asyncio.subprocess import PIPE
from datetime import UTC, datetime
from pathlib import Path

from tests.adapters.telegram.conftest import ANN, replies_done, running_bot
from tests.support.telegram_api import FakeTelegramBotApi

PERSON = f"telegram:{ANN}"


async def test_usage_tells_the_person_what_the_cli_prints(
    api: FakeTelegramBotApi,
    tmp_path: Path,
) -> None:
    async with running_bot(api, tmp_path):
        api.private_message(ANN, "/usage")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1, what="the first /usage")
        api.private_message(ANN, "Hello there, how are you today?")
        await replies_done(api, ANN, 1)
        api.private_message(ANN, "And what about tomorrow?")
        await replies_done(api, ANN, 2)
        api.private_message(ANN, "/usage")
        await api.wait_until(lambda: len(api.texts(ANN)) == 4, what="the second /usage")
        before, after = api.texts(ANN)[0], api.texts(ANN)[3]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL"))}
    env |= {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'kindred.db'}",
        "KINDRED_DATA_DIR": str(tmp_path / "data"),
    }
    cli = [sys.executable, "-m", "bot.cli", "usage", "--json", "--user", PERSON]
    process = await asyncio.create_subprocess_exec(*cli, env=env, stdout=PIPE, stderr=PIPE)
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, err.decode()
    [line] = [json.loads(text) for text in out.decode().splitlines()]
    assert line["user"] == PERSON and line["day"] == datetime.now(UTC).date().isoformat()
    assert line["replies"] == 2 and line["tokens_in"] > 0 and line["tokens_out"] > 0
    assert (line["cost"], line["budget_left"]) == (0.0, None)
    assert "Today: nothing yet" in before
    counted = f"{line['tokens_in']:,} tokens in, {line['tokens_out']:,} out (2 replies)"
    assert f"Today: {counted}" in after and f"This month: {counted}" in after
