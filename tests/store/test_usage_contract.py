"""The UsageLog contract, on SQLite and on PostgreSQL: each use is kept on its UTC day, summed per
person and per group chat, read back for /export, and gone with the person's /forget all."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from bot.core.store import Store
from bot.core.usage import Spent, UsageDay, UsageRecord

DAY = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)
ANN, BOB, GROUP = "telegram:1", "telegram:2", "telegram:-100"


async def test_uses_are_summed_per_person_group_and_day(store: Store) -> None:
    log = store.usage
    await log.record(UsageRecord(ANN, "reply", DAY, 800, 200))
    await log.record(UsageRecord(ANN, "reply", DAY, 12, 40, amount=4, group_id=GROUP))
    await log.record(UsageRecord(BOB, "reply", DAY, 5, 6, group_id=GROUP))
    await log.record(UsageRecord(ANN, "voice_seconds", DAY, amount=61.5))
    await log.record(UsageRecord(ANN, "image", DAY, amount=2))
    await log.record(UsageRecord(ANN, "proactive", DAY, 30, 10))
    await log.record(UsageRecord(ANN, "app_build", DAY))
    # 23:59 UTC of the day before: another day, whatever the clock of the process.
    await log.record(UsageRecord(ANN, "reply", DAY.replace(hour=0) - timedelta(minutes=1), 1, 1))
    day = DAY.date()
    got = await log.days(day, day)
    assert got == [
        UsageDay(ANN, day, False, 842, 250, 2, 61.5, 2, 1, 1),
        UsageDay(BOB, day, False, 5, 6, 1),
        UsageDay(GROUP, day, True, 17, 46, 2),
    ]
    assert await log.days(day, day, ANN) == [got[0]]
    assert await log.days(day, day, GROUP) == [got[2]]
    earlier = await log.days(day - timedelta(days=1), day, ANN)
    assert [(d.day, d.tokens_in) for d in earlier] == [(date(2026, 12, 3), 1), (day, 842)]
    assert await log.days(date(2026, 11, 1), date(2026, 11, 30)) == []


async def test_records_are_read_back_and_forgotten_with_the_person(store: Store) -> None:
    log = store.usage
    await log.record(UsageRecord(ANN, "reply", DAY, 3, 4, group_id=GROUP))
    await log.record(UsageRecord(BOB, "reply", DAY, 5, 6))
    await log.record(UsageRecord(ANN, "image", DAY + timedelta(seconds=1)))
    kept = await log.records(ANN)
    assert [(r.kind, r.tokens_in, r.tokens_out, r.group_id) for r in kept] == [
        ("reply", 3, 4, GROUP),
        ("image", 0, 0, None),
    ]
    assert kept[0].at == DAY
    await store.memories.forget_all(ANN)
    assert await log.records(ANN) == []
    assert [d.who for d in await log.days(DAY.date(), DAY.date())] == [BOB], "the other person's use stays"


async def test_an_unknown_kind_is_refused_and_nothing_is_kept(store: Store) -> None:
    with pytest.raises(ValueError, match="no such use"):
        await store.usage.record(UsageRecord(ANN, "tokens", DAY))  # type: ignore[arg-type]
    assert await store.usage.records(ANN) == []


async def test_a_person_counts_on_their_own_day_and_a_group_on_the_utc_day(store: Store) -> None:
    """Ann lives in Tokyo: her 20:00 UTC use is on her next day; her group's stays on the UTC day."""
    late = DAY.replace(hour=20)
    tokyo = date(2026, 12, 5)
    await store.usage.record(UsageRecord(ANN, "reply", late, 10, 5, group_id=GROUP, day=tokyo))
    assert [(d.who, d.day, d.group) for d in await store.usage.days(DAY.date(), tokyo)] == [
        (GROUP, DAY.date(), True),
        (ANN, tokyo, False),
    ]
    [kept] = await store.usage.records(ANN)
    assert kept.day == tokyo


async def test_spent_sums_a_day_and_its_month_with_cost(store: Store) -> None:
    log = store.usage
    await log.record(UsageRecord(ANN, "reply", DAY, 100, 50, model="m", cost=0.25))
    await log.record(UsageRecord(ANN, "reply", DAY - timedelta(days=3), 7, 3, cost=0.5, group_id=GROUP))
    await log.record(UsageRecord(ANN, "reply", DAY.replace(month=11), 1000, 1000, cost=9.0))
    await log.record(UsageRecord(BOB, "reply", DAY, 1, 1, cost=1.0, group_id=GROUP))
    today, month = await log.spent(ANN, DAY.date())
    assert (today.tokens, today.cost) == (150, 0.25)
    assert (month.tokens, month.cost) == (160, 0.75), "November's use is another month's"
    group_today, group_month = await log.spent(GROUP, DAY.date(), group=True)
    assert (group_today.tokens, group_month.tokens, group_month.cost) == (2, 12, 1.5)
    assert await log.spent("telegram:9", DAY.date()) == (Spent(), Spent())
    [first, *_] = await log.records(ANN)
    assert (first.model, first.cost) == ("m", 0.25)
    [line] = [d for d in await log.days(DAY.date(), DAY.date(), ANN)]
    assert line.cost == 0.25
