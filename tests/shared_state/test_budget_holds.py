"""Budget holds, in this process and shared through the session's real Redis: the same rule on
both (a hold is taken while every limit has room, given back once, lapsing by itself), and two
replicas that share Redis holding one budget between them, where replicas holding their own would
each spend it. While Redis is away each replica holds on its own, and nothing is refused for it."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.core.events import Refusal, ReplyDone
from bot.core.models import ChatMessage
from bot.core.usage import Holds
from bot.core.usage.ports import Check
from bot.shared_state.connection import connect
from bot.shared_state.local_holds import LocalHolds
from bot.shared_state.redis_holds import RedisHolds
from bot.store.sqlite.store import SqliteStore
from tests.conftest import STORE_FILE
from tests.support.budgets import budgeted, said
from tests.support.fakes import ScriptedInference
from tests.support.redis_server import redis_host, redis_url
from tests.support.tcp_link import CuttableLink


@pytest.fixture(params=["local", "redis"])
async def holds(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[float], Holds]]:
    clients = []

    def make(hold_s: float = 600.0) -> Holds:
        if request.param == "local":
            return LocalHolds(hold_s)
        client = connect(redis_url())
        clients.append(client)
        return RedisHolds(client, hold_s=hold_s)

    yield make
    for client in clients:
        await client.aclose()


async def test_a_hold_is_taken_while_every_limit_has_room(holds: Callable[[float], Holds]) -> None:
    held, who = holds(600.0), uuid.uuid4().hex
    limits = [Check("tokens", 100, 300), Check("cost", 0.5, 1.0)]
    assert await held.take(who, "a", 150, 0.25, limits)
    assert await held.take(who, "b", 150, 0.1, limits), "100 used + 150 held < 300"
    assert not await held.take(who, "c", 1, 0.0, limits), "100 used + 300 held reaches 300"
    await held.release(who, "a")
    await held.release(who, "a")  # again: harmless
    assert await held.take(who, "c", 1, 0.0, limits)
    assert not await held.take(who, "d", 1, 0.0, [Check("cost", 0.95, 1.0)]), "0.95 + 0.1 held"
    assert await held.take(uuid.uuid4().hex, "e", 10**6, 9.0, limits), "another person's room is theirs"


async def test_a_hold_lapses_by_itself(holds: Callable[[float], Holds]) -> None:
    """A replica that died mid-reply gives its room back."""
    held, who = holds(0.2), uuid.uuid4().hex
    assert await held.take(who, "a", 100, 0.0, [Check("tokens", 0, 100)])
    assert not await held.take(who, "b", 1, 0.0, [Check("tokens", 0, 100)])
    await asyncio.sleep(0.4)
    assert await held.take(who, "b", 1, 0.0, [Check("tokens", 0, 100)])


class Gated(ScriptedInference):
    """Writes nothing until the gate opens: every reply that went ahead is in flight at once."""

    def __init__(self, gate: asyncio.Event) -> None:
        super().__init__("a slow and careful reply")
        self.gate = gate

    async def stream(self, messages: Sequence[ChatMessage], **kwargs: Any) -> AsyncIterator[str]:
        self.prompts.append(list(messages))
        await self.gate.wait()
        async for word in super().stream(messages, **kwargs):
            yield word


async def replies_at_once(shared: bool, tmp_path: Path) -> tuple[int, int]:
    """Two replicas (each its own store connection and Redis client, or holds of its own) answer
    eight of one person's group chats at once, four each; the replies that went ahead write only
    once all eight messages were answered or started. (replies written, tokens counted)"""
    person, budget = f"telegram:{uuid.uuid4().int % 10**9}", "[everyone]\ntokens_per_day = 250\n"
    stores = [await SqliteStore.open(tmp_path / STORE_FILE) for _ in range(2)]
    clients = [connect(redis_url()) for _ in range(2)] if shared else []
    held: list[Holds] = [RedisHolds(c) for c in clients] if shared else [LocalHolds(), LocalHolds()]
    gate = asyncio.Event()
    models = [Gated(gate), Gated(gate)]
    try:
        replicas = [budgeted(store, h, budget, m) for store, h, m in zip(stores, held, models, strict=True)]
        asking = [
            asyncio.create_task(said(replicas[i % 2], person, f"telegram:-{i + 1}", "What do you think?",
                                     f"{person}:{i}", private=False))
            for i in range(8)
        ]  # fmt: skip
        while sum(t.done() for t in asking) + sum(len(m.prompts) for m in models) < 8:  # noqa: ASYNC110
            await asyncio.sleep(0.01)  # a poll: eight tasks in two places, no one event to wait for
        gate.set()
        answers = await asyncio.gather(*asking)
        spent, _ = await stores[0].usage.spent(person, datetime.now(UTC).date())
        assert all(isinstance(a, ReplyDone | Refusal) for a in answers)
        return sum(isinstance(a, ReplyDone) for a in answers), spent.tokens
    finally:
        for store in stores:
            await store.close()
        for client in clients:
            await client.aclose()


async def test_two_replicas_sharing_redis_hold_one_budget(tmp_path: Path) -> None:
    """Each reply holds its prompt and 100 tokens to write (about 110). A hold is taken while any
    room is left: 0, 110 and 220 held are under 250, 330 is not; so three replies go ahead,
    whichever replica takes them. Replicas holding their own would write three each."""
    written, spent = await replies_at_once(True, tmp_path)
    assert written == 3, "the fourth hold found about 330 held, and 250 is the limit"
    assert 0 < spent < 250, "the three replies written used less than they held"
    apart_written, _ = await replies_at_once(False, tmp_path / "apart")
    assert apart_written == 6, "holds of their own: each replica spends the budget once"


async def test_while_redis_is_away_each_replica_holds_on_its_own(caplog: pytest.LogCaptureFixture) -> None:
    host, port = redis_host().split(":")
    async with CuttableLink(host, int(port)) as link:
        db = redis_url().rsplit("/", 1)[1]
        client = connect(f"redis://127.0.0.1:{link.port}/{db}")
        held, who = RedisHolds(client), uuid.uuid4().hex
        try:
            assert await held.take(who, "a", 100, 0.0, [Check("tokens", 0, 150)])
            await link.cut()
            with caplog.at_level(logging.WARNING):
                assert await held.take(who, "b", 100, 0.0, [Check("tokens", 0, 150)]), (
                    "not refused for the outage"
                )
                assert not await held.take(who, "c", 100, 0.0, [Check("tokens", 50, 150)]), (
                    "its own holds count"
                )
                await held.release(who, "a")  # lapses in Redis by itself
            assert "holds are this replica's own" in caplog.text
            await link.restore()
            assert not await held.take(who, "d", 100, 0.0, [Check("tokens", 50, 150)]), "a's hold is in Redis"
        finally:
            await client.aclose()
