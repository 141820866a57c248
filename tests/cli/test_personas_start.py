"""A personas file that is broken at start stops `kindred run` and `kindred chat` before anything
starts: the real CLI as a process prints one line naming the file and the line, and exits with
status 1, having opened no store (no SQLite file, no table in PostgreSQL) and called no platform
(the loopback Bot API heard nothing)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import psycopg
import pytest

from tests.support.telegram_api import FakeTelegramBotApi

BROKEN = '[[persona]]\nname = "coach"\nprompt "You are a coach."\n'  # line 3 has no '='
SYNTAX = "Expected '=' after a key in a key/value pair (at line 3, column 8)"
EXIT_S = 120
# Whether the store was left untouched.
Untouched = Callable[[], Awaitable[bool]]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Untouched]:
    """A DATABASE_URL nothing has opened yet, and how to tell it is still so."""
    if request.param == "sqlite":
        file = tmp_path / "kindred.db"

        async def no_file() -> bool:
            return not file.exists()

        return f"sqlite:///{file}", no_file
    from tests.support.pg import as_url, fresh_database

    dsn = await fresh_database(request.getfixturevalue("pg_server"))

    async def no_table() -> bool:
        async with await psycopg.AsyncConnection.connect(dsn) as conn:
            found = await (
                await conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            ).fetchone()
        return found is not None and found[0] == 0

    return as_url(dsn), no_table


def start_env(api: FakeTelegramBotApi, data: Path, database_url: str, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL", "TELEGRAM_",
                                                                     "DISCORD_", "REDIS_URL"))}  # fmt: skip
    env.update(
        HF_HUB_OFFLINE="1", KINDRED_DATA_DIR=str(data), DATABASE_URL=database_url, KINDRED_WEB_PORT="0",
        TELEGRAM_BOT_TOKEN=api.token, TELEGRAM_API_BASE_URL=api.base_url, **more,
    )  # fmt: skip
    return env


async def kindred(env: dict[str, str], *argv: str) -> tuple[int | None, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *argv, env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(), EXIT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return process.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("command", [("run",), ("chat", "--user", "ann")], ids=["run", "chat"])
async def test_a_personas_file_that_does_not_parse_stops_the_start_in_one_line(
    tmp_path: Path, database: tuple[str, Untouched], command: tuple[str, ...]
) -> None:
    database_url, untouched = database
    data = tmp_path / "data"
    data.mkdir()
    (data / "personas.toml").write_text(BROKEN, encoding="utf-8")
    async with FakeTelegramBotApi() as api:
        code, out, err = await kindred(start_env(api, data, database_url), *command)
        assert api.calls == []
    assert (code, out) == (1, "")
    assert err.splitlines() == [f"kindred: {data / 'personas.toml'}: {SYNTAX}"]
    assert await untouched()


async def test_a_file_named_by_the_setting_is_the_one_named_and_its_mistake_too(
    tmp_path: Path, database: tuple[str, Untouched]
) -> None:
    database_url, untouched = database
    data, elsewhere = tmp_path / "data", tmp_path / "etc" / "kindred-personas.toml"
    data.mkdir()
    elsewhere.parent.mkdir()
    (data / "personas.toml").write_text('[[persona]]\nname = "fine"\nprompt = "Fine."\n', encoding="utf-8")
    elsewhere.write_text(
        '[[persona]]\nname = "coach"\nprompt = "A."\n[[persona]]\nname = "coach"\nprompt = "B."\n'
    )
    async with FakeTelegramBotApi() as api:
        env = start_env(api, data, database_url, KINDRED_PERSONAS_FILE=str(elsewhere))
        code, out, err = await kindred(env, "run")
        assert api.calls == []
    assert (code, out) == (1, "")
    assert err.splitlines() == [f"kindred: {elsewhere}: the persona name 'coach' is used twice"]
    assert await untouched()
