"""The ProactiveStore contract, on SQLite and on PostgreSQL: settings, reminders, who beat looks
at, the sent ledger (a key sent once), outcomes, trigger rates, and /forget all."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from bot.core.models import NewTurn
from bot.core.proactive.models import Claim, Delivery, NewReminder, ProactiveSettings
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
EMB = HashEmbedder()


def _turn(user: str, text: str, at: datetime, *, chat: str | None = None) -> NewTurn:
    return NewTurn(user, chat or user, "user", text, EMB.vector(text), EMB.model_name, at)


def _reminder(user: str, due: datetime, text: str = "call the dentist") -> NewReminder:
    return NewReminder(user, user, text, due, "Europe/Berlin", NOW)


async def test_settings_default_to_off_and_round_trip(store: Store) -> None:
    pro = store.proactive
    assert await pro.proactive_settings("telegram:1") == ProactiveSettings()
    chosen = ProactiveSettings(
        enabled=True,
        timezone="Europe/Berlin",
        quiet_start=time(23, 30),
        quiet_end=time(6, 15),
        disabled=frozenset({"habit"}),
        declined=frozenset({"telegram:1:habit:run-6"}),
    )
    await pro.save_proactive_settings("telegram:1", chosen, NOW)
    assert await pro.proactive_settings("telegram:1") == chosen
    await pro.save_proactive_settings("telegram:1", ProactiveSettings(timezone="Asia/Tokyo"), NOW)
    assert await pro.proactive_settings("telegram:1") == ProactiveSettings(timezone="Asia/Tokyo")
    await store.turns.add_turn(_turn("telegram:1", "hi", NOW))
    await store.turns.set_user_active("telegram:1", False)
    assert (await pro.proactive_settings("telegram:1")).inactive


async def test_beat_lists_only_people_who_opted_in_or_have_a_reminder_due(store: Store) -> None:
    pro = store.proactive
    for user in ("a:on", "b:off", "c:reminder", "d:later", "e:blocked"):
        await store.turns.add_turn(_turn(user, "hello", NOW))
    await pro.save_proactive_settings("a:on", ProactiveSettings(enabled=True), NOW)
    await pro.save_proactive_settings("b:off", ProactiveSettings(enabled=False, timezone="UTC"), NOW)
    await pro.add_reminder(_reminder("c:reminder", NOW - timedelta(minutes=1)))
    await pro.add_reminder(_reminder("d:later", NOW + timedelta(hours=1)))
    await pro.save_proactive_settings("e:blocked", ProactiveSettings(enabled=True), NOW)
    await store.turns.set_user_active("e:blocked", False)
    assert await pro.proactive_people(NOW, "", 10) == ["a:on", "c:reminder"]
    assert await pro.proactive_people(NOW, "a:on", 10) == ["c:reminder"]
    assert await pro.proactive_people(NOW, "", 1) == ["a:on"]
    assert await pro.proactive_people(NOW + timedelta(hours=2), "", 10) == ["a:on", "c:reminder", "d:later"]


async def test_reminders_list_soonest_first_and_cancel_only_ones_own(store: Store) -> None:
    pro = store.proactive
    late = await pro.add_reminder(_reminder("u:1", NOW + timedelta(days=2), "water the plants"))
    soon = await pro.add_reminder(_reminder("u:1", NOW + timedelta(hours=1)))
    await pro.add_reminder(_reminder("u:2", NOW + timedelta(hours=1)))
    assert [r.id for r in await pro.reminders("u:1")] == [soon.id, late.id]
    assert (soon.due, soon.timezone, soon.status) == (NOW + timedelta(hours=1), "Europe/Berlin", "scheduled")
    assert [r.id for r in await pro.reminders("u:1", due_by=NOW + timedelta(hours=2))] == [soon.id]
    assert not await pro.cancel_reminder("u:2", late.id, NOW)
    assert await pro.cancel_reminder("u:1", late.id, NOW)
    assert not await pro.cancel_reminder("u:1", late.id, NOW)
    assert [r.id for r in await pro.reminders("u:1")] == [soon.id]


async def test_a_key_is_claimed_once_and_a_cancelled_reminder_cannot_be(store: Store) -> None:
    pro = store.proactive
    claim = Claim("u:1:long_session:2026-12-01T09", "u:1", "long_session", NOW)
    assert await pro.claim(claim)
    assert not await pro.claim(claim)  # a second beat, a retried job
    reminder = await pro.add_reminder(_reminder("u:1", NOW))
    taken = Claim(f"u:1:reminder:{reminder.id}", "u:1", "reminder", NOW, reminder_id=reminder.id)
    assert await pro.claim(taken)
    assert not await pro.claim(taken)
    assert await pro.reminders("u:1") == []  # it left the schedule with its claim
    cancelled = await pro.add_reminder(_reminder("u:1", NOW))
    await pro.cancel_reminder("u:1", cancelled.id, NOW)
    late = Claim(f"u:1:reminder:{cancelled.id}", "u:1", "reminder", NOW, reminder_id=cancelled.id)
    assert not await pro.claim(late)
    keys = [row.key for row in await pro.sent_messages("u:1", NOW - timedelta(days=1))]
    assert keys == sorted([claim.key, taken.key])


async def test_a_sent_message_awaits_its_outcome_once(store: Store) -> None:
    pro = store.proactive
    await pro.claim(Claim("u:1:habit:run", "u:1", "habit", NOW))
    assert await pro.awaiting_outcome("u:1", "chat:1", NOW - timedelta(hours=2)) is None  # only claimed
    await pro.settle("u:1:habit:run", Delivery("sent", NOW, chat_id="chat:1", turn_id=41, message_id="m9"))
    row = await pro.awaiting_outcome("u:1", "chat:1", NOW - timedelta(hours=2))
    assert row is not None and (row.key, row.status, row.turn_id) == ("u:1:habit:run", "sent", 41)
    assert row.message_id == "m9"
    assert row.sent_at == NOW and row.trigger == "habit"
    assert await pro.awaiting_outcome("u:1", "chat:1", NOW + timedelta(minutes=1)) is None  # too long ago
    assert await pro.awaiting_outcome("u:1", "chat:2", NOW - timedelta(hours=2)) is None
    assert await pro.ledger_row(41) == row and await pro.ledger_row(42) is None
    assert await pro.record_outcome("u:1:habit:run", "accepted", NOW)
    assert not await pro.record_outcome("u:1:habit:run", "dismissed", NOW)
    assert await pro.awaiting_outcome("u:1", "chat:1", NOW - timedelta(hours=2)) is None
    settled = await pro.ledger_row(41)
    assert settled is not None and settled.outcome == "accepted"
    # A settled row is not settled again (a late retry cannot turn a sent message into a failure).
    await pro.settle("u:1:habit:run", Delivery("failed", NOW))
    assert (await pro.ledger_row(41)) == settled


async def test_trigger_rates_count_sent_messages_and_their_outcomes(store: Store) -> None:
    pro = store.proactive
    for index, outcome in enumerate(["accepted", "accepted", "dismissed", None]):
        key = f"u:{index}:habit:x"
        await pro.claim(Claim(key, f"u:{index}", "habit", NOW))
        await pro.settle(key, Delivery("sent", NOW, chat_id="c", turn_id=index))
        if outcome is not None:
            await pro.record_outcome(key, outcome, NOW)  # type: ignore[arg-type]
    await pro.claim(Claim("u:9:long_session:x", "u:9", "long_session", NOW))
    await pro.settle("u:9:long_session:x", Delivery("failed", NOW))
    rates = await pro.trigger_rates(NOW - timedelta(days=30))
    assert [(r.trigger, r.sent, r.accepted, r.dismissed) for r in rates] == [("habit", 4, 2, 1)]
    assert rates[0].success_rate == 0.5
    assert await pro.trigger_rates(NOW + timedelta(seconds=1)) == []


async def test_activity_reads_the_persons_own_messages_oldest_first(store: Store) -> None:
    pro = store.proactive
    for minutes in (0, 10, 20, 30):
        await store.turns.add_turn(
            _turn("telegram:5", f"message {minutes}", NOW + timedelta(minutes=minutes))
        )
    await store.turns.add_turn(_turn("telegram:6", "someone else", NOW))
    found = await pro.activity("telegram:5", NOW + timedelta(minutes=5), 2)
    assert [a.text for a in found] == ["message 20", "message 30"]
    assert found[0].at == NOW + timedelta(minutes=20)
    assert (found[0].platform, found[0].chat_id) == ("telegram", "telegram:5")


async def test_forget_all_removes_the_persons_proactive_rows(store: Store) -> None:
    pro = store.proactive
    await store.turns.add_turn(_turn("u:1", "hello", NOW))
    await pro.save_proactive_settings("u:1", ProactiveSettings(enabled=True), NOW)
    await pro.add_reminder(_reminder("u:1", NOW))
    await pro.claim(Claim("u:1:habit:x", "u:1", "habit", NOW))
    await pro.save_proactive_settings("u:2", ProactiveSettings(enabled=True), NOW)
    await store.memories.forget_all("u:1")
    assert await pro.proactive_settings("u:1") == ProactiveSettings()
    assert await pro.reminders("u:1") == [] and await pro.sent_messages("u:1", NOW - timedelta(days=1)) == []
    assert await pro.claim(Claim("u:1:habit:x", "u:1", "habit", NOW))  # nothing of theirs is left
    assert (await pro.proactive_settings("u:2")).enabled


async def test_a_repeating_reminder_moves_to_its_next_reading_when_claimed(store: Store) -> None:
    pro = store.proactive
    daily = NewReminder("u:1", "u:1", "stretch", NOW, "UTC", NOW, every=timedelta(days=1))
    reminder = await pro.add_reminder(daily)
    assert reminder.every == timedelta(days=1)
    first = Claim("u:1:reminder:a", "u:1", "reminder", NOW, reminder.id, next_due=NOW + timedelta(days=1))
    assert await pro.claim(first)
    [still] = await pro.reminders("u:1")
    assert (still.status, still.due) == ("scheduled", NOW + timedelta(days=1))
    assert not await pro.claim(first)
    assert [r.id for r in await pro.reminders("u:1")] == [reminder.id]
