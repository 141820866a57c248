"""The DeliveryLog contract, on SQLite and on PostgreSQL: a reply whose delivery is unknown is
kept once, read back with its text, told once, and settled once (delivered or sent again)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from bot.core.models import DeliveryDoubt, NewTurn
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
EMB = HashEmbedder()
ANN = "telegram:1"


async def _reply(store: Store, text: str, chat: str = ANN) -> int:
    turn = NewTurn(ANN, chat, "assistant", text, EMB.vector(text), EMB.model_name, NOW)
    return (await store.turns.add_turn(turn)).id


async def test_an_unknown_reply_is_kept_once_and_read_back_with_its_text(store: Store) -> None:
    log = store.deliveries
    first, second = await _reply(store, "the first"), await _reply(store, "the second")
    elsewhere = await _reply(store, "in the group", chat="telegram:-5")
    for turn in (second, first, first):  # again: a no-op
        await log.record(DeliveryDoubt("telegram", "1", turn, ANN))
    await log.record(DeliveryDoubt("telegram", "-5", elsewhere, ANN))
    assert await log.waiting("telegram", "1") == [
        DeliveryDoubt("telegram", "1", first, ANN, "the first"),
        DeliveryDoubt("telegram", "1", second, ANN, "the second"),
    ]
    assert await log.waiting("discord", "1") == []


async def test_told_once_then_settled_once(store: Store) -> None:
    log = store.deliveries
    turn = await _reply(store, "maybe lost")
    await log.record(DeliveryDoubt("telegram", "1", turn, ANN))
    assert await log.settle("telegram", "1", turn, "told")
    assert not await log.settle("telegram", "1", turn, "told")
    [waiting] = await log.waiting("telegram", "1")
    assert waiting.status == "told"
    assert await log.settle("telegram", "1", turn, "resent")
    assert not await log.settle("telegram", "1", turn, "delivered")
    assert await log.waiting("telegram", "1") == []
    assert not await log.settle("telegram", "1", 424242, "delivered")  # none such: nothing moves


async def test_two_presses_at_once_settle_it_once(store: Store) -> None:
    log = store.deliveries
    turn = await _reply(store, "press me")
    await log.record(DeliveryDoubt("telegram", "1", turn, ANN))
    moved = await asyncio.gather(*(log.settle("telegram", "1", turn, "resent") for _ in range(5)))
    assert sorted(moved) == [False, False, False, False, True]


async def test_an_unknown_status_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="cannot become"):
        await store.deliveries.settle("telegram", "1", 1, "unknown")
