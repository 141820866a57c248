"""`kindred run` as an admin starts it: a real process serving Telegram (a loopback Bot API server),
with the real embedder and a tiny model, on each store."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import aiohttp
import pytest

from bot.core.miniapps.facts import Facts
from bot.core.miniapps.models import NewVersion
from bot.core.miniapps.specs import rule_spec
from bot.store.sqlite.store import SqliteStore
from bot.web.miniapps.render import render_app
from tests.adapters.telegram.conftest import ANN, replies_done
from tests.support.telegram_api import FakeTelegramBotApi

START_S = 120


def run_env(api: FakeTelegramBotApi, data: Path, database_url: str, model: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL", "TELEGRAM_"))}
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "KINDRED_DATA_DIR": str(data),
            "DATABASE_URL": database_url,
            "KINDRED_MODEL": str(model),
            "KINDRED_MAX_NEW_TOKENS": "8",
            "KINDRED_LOG_LEVEL": "DEBUG",
            "KINDRED_WEB_PORT": "0",
            "TELEGRAM_BOT_TOKEN": api.token,
            "TELEGRAM_API_BASE_URL": api.base_url,
        }
    )
    return env


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'kindred.db'}"
    from tests.support.pg import as_url, fresh_database

    return as_url(await fresh_database(request.getfixturevalue("pg_server")))


async def test_kindred_run_serves_telegram_and_never_logs_the_token(
    tmp_path: Path, shared_data: Path, tiny_model: Path, database_url: str
) -> None:
    async with FakeTelegramBotApi() as api:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run",
            env=run_env(api, shared_data, database_url, tiny_model),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            await api.wait_for_call("getUpdates", timeout=START_S)
            api.private_message(ANN, "hello from Telegram")
            await replies_done(api, ANN, 1, wait_s=60)
            api.reaction(ANN, api.bot_messages(ANN)[0].data["message_id"], ANN, old=[], new=["👍"])
            await api.wait_for_call("getUpdates", count=len(api.calls_of("getUpdates")) + 1)
        finally:
            process.send_signal(signal.SIGTERM)
            _, stderr = await asyncio.wait_for(process.communicate(), 60)
    log = stderr.decode()
    assert process.returncode == 0, log[-3000:]
    assert "serving telegram" in log and "Traceback" not in log
    assert api.token not in log and api.token.split(":")[1] not in log
    # The DEBUG log holds python-telegram-bot's request lines (tests/test_logs.py checks that a
    # token inside any line is redacted).
    assert "getUpdates" in log and "sendMessage" in log


async def test_kindred_run_without_a_platform_says_so_and_serves_apps_and_health(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    db = tmp_path / "kindred.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "TELEGRAM_", "DISCORD_"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", KINDRED_DATA_DIR=str(shared_data))
    env.update(DATABASE_URL=f"sqlite:///{db}", KINDRED_MODEL=str(tiny_model), KINDRED_WEB_PORT="0")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", env=env, stderr=asyncio.subprocess.PIPE, cwd=tmp_path
    )
    assert process.stderr is not None
    lines: list[str] = []
    try:
        port = await asyncio.wait_for(_served_port(process.stderr, lines), START_S)
        store = await SqliteStore.open(db)
        try:
            spec = rule_spec("notes", "a journal", Facts(), date.today())
            rendered = render_app("notes", spec)
            body = NewVersion("notes", spec["title"], spec, rendered, "a journal", "k", "rules")
            app = await store.miniapps.create_app("console:ann", "console", "t" * 32, body, datetime.now(UTC))
        finally:
            await store.close()
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as health:
                assert health.status == 200 and (await health.json())["platforms"] == []
            async with http.get(f"http://127.0.0.1:{port}/a/{app.token}") as page:
                assert page.status == 200 and "sandbox" in page.headers["Content-Security-Policy"]
    finally:
        process.send_signal(signal.SIGTERM)
        rest = await asyncio.wait_for(process.stderr.read(), 60)
        await process.wait()
    log = "".join(lines) + rest.decode()
    assert process.returncode == 0, log[-3000:]
    assert "TELEGRAM_BOT_TOKEN" in log and "only the web server runs" in log


async def _served_port(stream: asyncio.StreamReader, lines: list[str]) -> int:
    while line := (await stream.readline()).decode():
        lines.append(line)
        if found := re.search(r"serving the web server only on port (\d+)", line):
            return int(found[1])
    raise AssertionError("kindred run ended before serving: " + "".join(lines)[-3000:])
