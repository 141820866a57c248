"""/proactive, /reminders and "remind me …" on a real SQLite store and a simulated clock: what each
answers, what it stores, and the hostile reminders that get a clear answer and schedule nothing."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

from bot.core.models import NewTurn
from bot.core.proactive.commands import NEEDS_ZONE, OFF, UNREACHABLE, ProactiveCommands, quiet_hours
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)  # a Tuesday; 10:00 in Berlin
ANN = "telegram:1"


@pytest.fixture
def commands(store: SqliteStore) -> ProactiveCommands:
    return ProactiveCommands(store.proactive, clock=lambda: NOW)


async def test_check_ins_are_off_until_turned_on_and_say_what_on_means(
    store: SqliteStore, commands: ProactiveCommands
) -> None:
    assert (await commands.proactive(ANN, "")).startswith("Check-ins: off (the default).")
    on = await commands.proactive(ANN, "on")
    assert "At most 2 a day" in on and "don't suggest this again" in on and on.endswith(NEEDS_ZONE)
    assert (await store.proactive.proactive_settings(ANN)).enabled
    assert await commands.proactive(ANN, "off") == OFF
    assert not (await store.proactive.proactive_settings(ANN)).enabled
    assert (await commands.proactive(ANN, "sideways")).startswith("/proactive on or off")


async def test_time_zone_and_quiet_hours_are_checked_before_they_are_kept(
    store: SqliteStore, commands: ProactiveCommands
) -> None:
    assert "don't know the time zone 'Mars/Olympus'" in await commands.proactive(ANN, "timezone Mars/Olympus")
    for hostile in ("../../etc/passwd", "Europe/" + "x" * 5000, "UTC\x00"):
        assert len(await commands.proactive(ANN, f"timezone {hostile}")) < 200
    assert (await store.proactive.proactive_settings(ANN)).timezone is None
    assert await commands.proactive(ANN, "timezone Europe/Berlin") == (
        "Done: your time zone is Europe/Berlin (it is 10:00 there now)."
    )
    assert "two times" in await commands.proactive(ANN, "quiet 25-7")
    assert "from 23:30 to 06:45" in await commands.proactive(ANN, "quiet 23:30-6:45")
    settings = await store.proactive.proactive_settings(ANN)
    assert (settings.timezone, settings.quiet_start, settings.quiet_end) == (
        "Europe/Berlin", time(23, 30), time(6, 45)
    )  # fmt: skip
    status = await commands.proactive(ANN, "")
    assert status.startswith("Check-ins: off (the default). Time zone: Europe/Berlin.")


def test_quiet_hours_read_two_clock_times() -> None:
    assert quiet_hours("22-7") == (time(22), time(7))
    assert quiet_hours("22:15 to 7:05") == (time(22, 15), time(7, 5))
    assert quiet_hours("22-7:60") is None and quiet_hours("late") is None and quiet_hours("24-7") is None


async def test_a_kind_of_check_in_can_be_turned_off_and_back_on(
    store: SqliteStore, commands: ProactiveCommands
) -> None:
    assert (await commands.proactive(ANN, "never habits")).startswith("Okay, no more habit offers.")
    assert (await store.proactive.proactive_settings(ANN)).disabled == {"habit"}
    assert "Turned off: habit offers." in await commands.proactive(ANN, "")
    assert await commands.proactive(ANN, "allow habits") == "Done: habit offers are back on."
    assert (await store.proactive.proactive_settings(ANN)).disabled == frozenset()
    assert (await commands.proactive(ANN, "never reminders")).startswith("Which kind?")


async def test_a_reminder_waits_for_a_time_zone_then_is_confirmed_in_local_time(
    store: SqliteStore, commands: ProactiveCommands
) -> None:
    asked = "remind me on Thursday at 3pm to call the dentist"
    assert NEEDS_ZONE in await commands.remind(ANN, ANN, asked)
    assert await store.proactive.reminders(ANN) == []
    await commands.proactive(ANN, "timezone Europe/Berlin")
    answer = await commands.remind(ANN, ANN, asked)
    assert answer.startswith("Okay: on Thursday 3 December 2026 at 15:00 (Europe/Berlin)")
    [reminder] = await store.proactive.reminders(ANN)
    assert reminder.due == datetime(2026, 12, 3, 14, 0, tzinfo=UTC) and reminder.text == "call the dentist"
    assert f"#{reminder.id}" in answer
    listing = await commands.reminders(ANN, "")
    assert f"#{reminder.id} · Thu 3 Dec 2026 15:00 (Europe/Berlin) · call the dentist" in listing
    assert await commands.reminders(ANN, f"cancel {reminder.id}") == f"Cancelled reminder #{reminder.id}."
    assert "no scheduled reminder" in await commands.reminders(ANN, f"cancel {reminder.id}")
    assert (await commands.reminders(ANN, "")).startswith("You have no reminders.")
    assert (await commands.reminders(ANN, "cancel ²")).startswith("/reminders lists")


@pytest.mark.parametrize(
    "hostile",
    [
        "remind me in 10,000 years to check this",
        "remind me every second to blink",
        "remind me on February 31 to pay rent",
        "remind me",
        "remind me to " + "x" * 400,
    ],
)
async def test_hostile_reminders_get_a_clear_answer_and_schedule_nothing(
    store: SqliteStore, commands: ProactiveCommands, hostile: str
) -> None:
    await commands.proactive(ANN, "timezone Europe/Berlin")
    answer = await commands.remind(ANN, ANN, hostile)
    assert answer and not answer.startswith("Okay")
    assert await store.proactive.reminders(ANN) == []


async def test_a_flood_of_reminders_stops_at_the_limit(
    store: SqliteStore, commands: ProactiveCommands
) -> None:
    await commands.proactive(ANN, "timezone UTC")
    for _ in range(50):
        assert (await commands.remind(ANN, ANN, "remind me tomorrow at 9 to drink water")).startswith("Okay")
    assert "cancel some first" in await commands.remind(ANN, ANN, "remind me tomorrow at 9 to stretch")
    assert len(await store.proactive.reminders(ANN)) == 50


async def test_a_reminder_in_quiet_hours_says_when_it_will_come(
    store: SqliteStore, commands: ProactiveCommands
) -> None:
    await commands.proactive(ANN, "timezone Europe/Berlin")
    answer = await commands.remind(ANN, ANN, "remind me tomorrow at 11pm to lock the door")
    assert "at 23:00 (Europe/Berlin)" in answer and answer.endswith("so it comes when they end, at 08:00.")
    daytime = await commands.remind(ANN, ANN, "remind me tomorrow at 3pm to call mum")
    assert "quiet hours" not in daytime


async def test_without_a_time_zone_a_guess_from_when_they_write_is_offered_to_confirm(
    store: SqliteStore, commands: ProactiveCommands
) -> None:
    embedder = HashEmbedder()
    # Three weeks of messages every hour from 07:00 to 00:00 in Tokyo (22:00–15:00 UTC), none at night.
    for day in range(21):
        for hour in (-2, -1, *range(16)):
            at = NOW - timedelta(days=day + 1) + timedelta(hours=hour - 9)
            turn = NewTurn(ANN, ANN, "user", "hello", embedder.vector("hello"), embedder.model_name, at)
            await store.turns.add_turn(turn)
    answer = await commands.proactive(ANN, "on")
    assert "you may be on UTC+9, for example Asia/" in answer and "/proactive timezone Asia/" in answer
    assert (await store.proactive.proactive_settings(ANN)).timezone is None  # only ever confirmed
    assert NEEDS_ZONE in await commands.remind("telegram:2", "telegram:2", "remind me at 5pm to go")


async def test_where_nothing_can_reach_the_person_later_nothing_is_promised(store: SqliteStore) -> None:
    """The terminal has no messenger: a reminder there would never ring, so none is scheduled."""
    terminal = ProactiveCommands(
        store.proactive, clock=lambda: NOW, reachable=lambda user: user.startswith("telegram:")
    )
    await terminal.proactive("ann", "timezone UTC")
    assert (
        await terminal.remind("ann", "console", "remind me tomorrow at 9 to water the plants") == UNREACHABLE
    )
    assert await terminal.proactive("ann", "on") == UNREACHABLE
    assert (
        await store.proactive.reminders("ann") == []
        and not (await store.proactive.proactive_settings("ann")).enabled
    )
    assert (await terminal.proactive(ANN, "on")).startswith("Done: check-ins are on.")
