"""Fixtures for tests that run bot replicas as processes (tests/support/replica.py): a loopback
Telegram with a bot and people of its own each run, replicas on one SQLite file and the shared
state in this session's Redis database, and what the store holds afterwards.

Use them from a test module:

    from tests.support.replica_fixtures import replica_api, start_replica  # noqa: F401
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.jobs.workerproc import redis_url
from tests.support.replica_procs import ReplicaProcess, replica_env
from tests.support.telegram_api import FakeTelegramBotApi

StartReplica = Callable[..., Awaitable[ReplicaProcess]]
STORE_FILE = "kindred.db"


@pytest.fixture
async def replica_api() -> AsyncIterator[FakeTelegramBotApi]:
    """No run sees another's state in Redis: keys are per bot, and per person."""
    bot_id = random.randint(10**8, 10**9)
    async with FakeTelegramBotApi(f"{bot_id}:AAHreplicaTestToken-0123456789abcdef") as fake:
        yield fake
    cleaner = Redis.from_url(redis_url())
    for pattern in (f"*:{bot_id}:*", f"*:person:telegram:{bot_id}*"):
        async for key in cleaner.scan_iter(f"kindred:shared:{pattern}"):
            await cleaner.delete(key)
    await cleaner.aclose()


@pytest.fixture
async def start_replica(replica_api: FakeTelegramBotApi, tmp_path: Path) -> AsyncIterator[StartReplica]:
    """`await start_replica(NAME=value, …)`: one more replica, with these settings over the rest."""
    started: list[ReplicaProcess] = []

    async def start(**settings: str) -> ReplicaProcess:
        database = f"sqlite:///{tmp_path / STORE_FILE}"
        env = replica_env(replica_api.token, replica_api.base_url, database, tmp_path, **settings)
        # One after the other: the first migrates the store, the next finds it migrated.
        replica = await ReplicaProcess.start(env, tmp_path / f"replica{len(started)}.log")
        started.append(replica)
        return replica

    yield start
    for replica in started:
        if replica.process.returncode is None:
            replica.kill()
            await replica.process.wait()


def person(api: FakeTelegramBotApi, n: int) -> int:
    """The n-th person of this run (their ids begin with the bot's)."""
    return int(api.token.split(":")[0]) * 1000 + n


def stored_turns(folder: Path, chat_id: int) -> list[tuple[str, str]]:
    """(role, text) of a private chat's turns, in the order the store took them."""
    with sqlite3.connect(folder / STORE_FILE) as db:
        rows = db.execute(
            "SELECT role, text FROM turns WHERE chat_id = ? ORDER BY id", (f"telegram:{chat_id}",)
        ).fetchall()
    return [(role, text) for role, text in rows]
