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


async def usage_cli(tmp_path: Path, *extra: str) -> list[dict[str, object]]:
    """`kindred usage --json --user PERSON`, a process of its own, on the test's database file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL"))}
    env |= {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'kindred.db'}",
        "KINDRED_DATA_DIR": str(tmp_path / "data"),
    }
    cli = [sys.executable, "-m", "bot.cli", "usage", "--json", "--user", PERSON, *extra]
    process = await asyncio.create_subprocess_exec(*cli, env=env, stdout=PIPE, stderr=PIPE)
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, err.decode()
    return [json.loads(text) for text in out.decode().splitlines()]


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
    [line] = await usage_cli(tmp_path)
    assert line["user"] == PERSON and line["day"] == datetime.now(UTC).date().isoformat()
    assert line["replies"] == 2 and line["tokens_in"] > 0 and line["tokens_out"] > 0
    assert (line["cost"], line["budget_left"]) == (0.0, None)
    assert "Today: nothing yet" in before
    counted = f"{line['tokens_in']:,} tokens in, {line['tokens_out']:,} out (2 replies)"
    assert f"Today: {counted}" in after and f"This month: {counted}" in after


BUDGET = "[everyone]\ntokens_per_day = 10\n"


async def test_a_budget_runs_out_on_telegram_and_usage_and_the_cli_agree(
    api: FakeTelegramBotApi,
    tmp_path: Path,
) -> None:
    """One reply uses the allowance; the next message is answered with when it renews; /usage
    shows nothing left, as `kindred usage --json` does with the same budgets file."""
    async with running_bot(api, tmp_path, budgets=BUDGET):
        api.private_message(ANN, "Hello there, how are you today? I have a long question for you.")
        await replies_done(api, ANN, 1)
        api.private_message(ANN, "And another thing?")
        await api.wait_until(lambda: len(api.texts(ANN)) == 2, what="the refusal")
        api.private_message(ANN, "/usage")
        await api.wait_until(lambda: len(api.texts(ANN)) == 3, what="/usage")
        refusal, usage = api.texts(ANN)[1], api.texts(ANN)[2]
    assert refusal.startswith("You've used your allowance for today (10 tokens). It renews at midnight, UTC")
    assert "Left: 0 tokens today." in usage
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "budgets.toml").write_text(BUDGET)
    [line] = await usage_cli(tmp_path)
    assert line["budget_left"] == {"tokens_today": 0} and line["replies"] == 1
    assert f"Today: {line['tokens_in']:,} tokens in, {line['tokens_out']:,} out (1 reply)" in usage
