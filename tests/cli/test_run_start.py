"""`kindred run` when a platform is not there yet: it says so, tries again with backoff, and serves
once the platform answers; a refused token fails at once. Whatever happens, the log ends clean:
no asyncio "Unclosed client session", "Task was destroyed", or traceback. Telegram runs as a real
process against its loopback Bot API; Discord runs serve() in this process, since discord.py is
pointed at its loopback fake through class attributes here."""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import signal
import sys
from pathlib import Path

import pytest

from bot.cli.run import serve
from bot.wiring.settings import GeneralSettings
from tests.adapters.telegram.conftest import ANN, replies_done
from tests.cli.test_run import START_S, run_env
from tests.cli.test_serve_both import served_settings
from tests.jobs.workerproc import free_port
from tests.support import discord_payloads as p
from tests.support.discord_fake import FakeDiscord
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.waiting import wait_until

# What asyncio and aiohttp print when a shutdown leaves something behind.
UNCLEAN = (
    "Unclosed client session",
    "Unclosed connector",
    "Task was destroyed",
    "Traceback",
    "Event loop is closed",
)
RETRY = re.compile(r"cannot be reached \(NetworkError\): attempt (\d+) of (\d+); trying again in ([\d.]+) s")


def assert_clean(log: str) -> None:
    found = [marker for marker in UNCLEAN if marker in log]
    assert not found, log[-3000:]


async def start_run(env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", env=env, stderr=asyncio.subprocess.PIPE
    )  # fmt: skip


async def read_until(
    stream: asyncio.StreamReader, lines: list[str], pattern: re.Pattern[str]
) -> re.Match[str]:
    while line := (await stream.readline()).decode():
        lines.append(line)
        if found := pattern.search(line):
            return found
    raise AssertionError("kindred run ended first: " + "".join(lines)[-3000:])


async def test_telegram_down_at_start_is_retried_until_it_answers(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    api = FakeTelegramBotApi()
    api.port = free_port()  # nothing listens there yet: every connection is refused
    env = run_env(api, shared_data, f"sqlite:///{tmp_path / 'kindred.db'}", tiny_model)
    env.update(KINDRED_LOG_LEVEL="WARNING", KINDRED_START_BACKOFF_S="0.2")
    process = await start_run(env)
    assert process.stderr is not None
    lines: list[str] = []
    try:
        second = await asyncio.wait_for(
            read_until(process.stderr, lines, re.compile(r"attempt 2 of")), START_S
        )
        await api.start()  # the proxy is up at last
        reader = asyncio.create_task(read_until(process.stderr, lines, re.compile(r"serving telegram")))
        await asyncio.wait_for(reader, 60)
        api.private_message(ANN, "are you there now?")
        await replies_done(api, ANN, 1, wait_s=60)
    finally:
        process.send_signal(signal.SIGTERM)
        rest = await asyncio.wait_for(process.stderr.read(), 60)
        await process.wait()
        await api.stop()
    log = "".join(lines) + rest.decode()
    assert process.returncode == 0, log[-3000:]
    retries = [RETRY.search(line) for line in lines if "attempt" in line and "trying again" in line]
    assert [(m[1], m[2]) for m in retries if m][:2] == [("1", "8"), ("2", "8")], second.string
    delays = [float(m[3]) for m in retries if m]
    assert delays[:2] == [0.2, 0.4]  # doubling
    assert "connected on attempt" in log
    assert api.token not in log and api.token.split(":")[1] not in log
    assert_clean(log)


async def test_a_refused_telegram_token_fails_at_once_and_cleanly(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    async with FakeTelegramBotApi() as api:
        env = run_env(api, shared_data, f"sqlite:///{tmp_path / 'kindred.db'}", tiny_model)
        wrong = "4242:not-the-token-at-all"
        env.update(TELEGRAM_BOT_TOKEN=wrong, KINDRED_START_BACKOFF_S="5")
        process = await start_run(env)
        assert process.stderr is not None
        _, err = await asyncio.wait_for(process.communicate(), START_S)
    log = err.decode()
    assert process.returncode == 1, log[-3000:]
    assert "TELEGRAM_BOT_TOKEN was refused by the Bot API" in log
    assert "trying again" not in log  # no retry: waiting will not make a wrong token right
    assert wrong not in log and "not-the-token-at-all" not in log
    assert_clean(log)


async def test_telegram_that_never_comes_gives_up_after_the_bounded_attempts(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    api = FakeTelegramBotApi()
    api.port = free_port()
    env = run_env(api, shared_data, f"sqlite:///{tmp_path / 'kindred.db'}", tiny_model)
    env.update(KINDRED_START_ATTEMPTS="3", KINDRED_START_BACKOFF_S="0.1")
    process = await start_run(env)
    _, err = await asyncio.wait_for(process.communicate(), START_S)
    log = err.decode()
    assert process.returncode == 1, log[-3000:]
    assert len(RETRY.findall(log)) == 2
    assert "gave up after 3 attempts" in log
    assert_clean(log)


async def test_discord_down_at_start_is_retried_and_the_stop_is_clean(
    tmp_path: Path, shared_data: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    caplog.set_level(logging.WARNING)
    fake = FakeDiscord(port=free_port())
    fake.point_discord_py_here(monkeypatch)
    general = GeneralSettings(data_dir=shared_data, start_backoff_s=0.2)
    settings = served_settings(tmp_path / "kindred.db", general, tiny_model)
    stop = asyncio.Event()
    served = asyncio.create_task(serve(settings, stop=stop))
    try:
        await wait_until(lambda: "attempt 2 of 8" in caplog.text, within_s=START_S, what="two refused logins")
        await fake.start()
        await wait_until(lambda: bool(fake.gateway.dispatches("READY")), within_s=60, what="READY")
        on_discord = await fake.dm(p.user(7_100_000_000_000_000_002, "eve"), "hello again")
        await wait_until(lambda: len(fake.replies_to(on_discord)) == 1, within_s=60, what="a reply")
    finally:
        stop.set()
        assert await asyncio.wait_for(served, 60) == 0
        await fake.stop()
    gc.collect()  # an unclosed aiohttp session says so when it is collected
    await asyncio.sleep(0)
    assert "could not reach Discord: ClientConnectorError: attempt 1 of 8" in caplog.text
    assert "connected on attempt" in caplog.text
    assert p.TOKEN not in caplog.text
    assert_clean(caplog.text)
