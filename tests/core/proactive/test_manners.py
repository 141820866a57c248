"""manners.choose: quiet hours, the daily cap, consent, "don't suggest this again", back-off, replies."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time, timedelta

import pytest

from bot.core.proactive.backoff import backed_off, backed_off_for, success_rate
from bot.core.proactive.local_time import quiet_until, zone
from bot.core.proactive.manners import choose, sent_today
from bot.core.proactive.models import (
    DONT_SUGGEST_AGAIN,
    Occasion,
    SentRecord,
    TriggerName,
    TriggerRate,
)
from bot.core.proactive.policy import DEFAULT
from bot.core.proactive.replies import is_acceptance, is_decline, is_dont_suggest_again, outcome
from tests.core.proactive.support import person

NIGHT = {"quiet_start": time(22, 0), "quiet_end": time(7, 0)}
NOON = datetime(2026, 11, 4, 12, 0, tzinfo=UTC)  # Wednesday; London = UTC in November


def occasion(trigger: TriggerName, name: str = "x", due: datetime = NOON - timedelta(days=1)) -> Occasion:
    return Occasion("u1", trigger, f"u1:{trigger}:{name}", "because", "text", due)


def sent(trigger: str, at: datetime, accepted: bool | None = None, name: str = "old") -> SentRecord:
    return SentRecord(key=f"u1:{trigger}:{name}", trigger=trigger, at=at, accepted=accepted)


REMINDER, HABIT, FOLLOW_UP, SESSION = (
    occasion(t) for t in ("reminder", "habit", "follow_up", "long_session")
)


@pytest.mark.parametrize(
    ("local", "quiet"),
    [(time(21, 59), False), (time(22, 0), True), (time(23, 59), True), (time(0, 30), True),
     (time(6, 59), True), (time(7, 0), False)],
)  # fmt: skip
def test_quiet_hours_across_midnight_hold_everything_and_reminders_come_after(
    local: time, quiet: bool
) -> None:
    now = datetime.combine(NOON.date(), local, tzinfo=UTC)
    chosen = choose([REMINDER, HABIT], person(**NIGHT), now, DEFAULT)
    assert [o.trigger for o in chosen] == ([] if quiet else ["reminder", "habit"])


def test_quiet_hours_are_kept_on_the_persons_clock() -> None:
    # 04:00 UTC is 23:00 in New York (EST): quiet there, though it is a London morning's edge.
    now = datetime(2026, 11, 4, 4, 0, tzinfo=UTC)
    assert choose([REMINDER], person(timezone="America/New_York", **NIGHT), now, DEFAULT) == []
    assert choose([REMINDER], person(timezone="Asia/Tokyo", **NIGHT), now, DEFAULT) == [REMINDER]  # 13:00


def test_a_deferred_reminder_is_still_chosen_after_quiet_hours() -> None:
    late = occasion("reminder", due=datetime(2026, 11, 3, 23, 0, tzinfo=UTC))
    assert choose([late], person(**NIGHT), datetime(2026, 11, 3, 23, 5, tzinfo=UTC), DEFAULT) == []
    assert choose([late], person(**NIGHT), datetime(2026, 11, 4, 7, 0, tzinfo=UTC), DEFAULT) == [late]


def test_the_daily_cap_counts_the_local_day_and_leaves_reminders_alone() -> None:
    two_today = [
        sent("habit", NOON - timedelta(hours=5), name="a"),
        sent("follow_up", NOON - timedelta(hours=3)),
    ]
    assert sent_today(person(sent=two_today), NOON) == 2
    assert choose([REMINDER, HABIT], person(sent=two_today), NOON, DEFAULT) == [REMINDER]
    one_today = [two_today[1], sent("habit", NOON - timedelta(hours=13), name="a")]  # 23:00 yesterday
    assert choose([REMINDER, HABIT], person(sent=one_today), NOON, DEFAULT) == [REMINDER, HABIT]
    reminders = [sent("reminder", NOON - timedelta(hours=h), name=str(h)) for h in (3, 4, 5)]
    assert choose([HABIT], person(sent=reminders), NOON, DEFAULT) == [HABIT], "reminders are not counted"


def test_one_offer_per_beat_the_most_time_bound_first_and_spaced_apart() -> None:
    assert choose([HABIT, FOLLOW_UP, SESSION], person(), NOON, DEFAULT) == [SESSION]
    recent = [sent("habit", NOON - timedelta(minutes=90))]
    assert choose([FOLLOW_UP], person(sent=recent), NOON, DEFAULT) == []
    assert choose([FOLLOW_UP], person(sent=recent), NOON + timedelta(minutes=30), DEFAULT) == [FOLLOW_UP]


def test_consent_off_or_no_zone_leaves_only_reminders_and_inactive_leaves_nothing() -> None:
    assert choose([REMINDER, HABIT], person(enabled=False), NOON, DEFAULT) == [REMINDER]
    assert choose([REMINDER, HABIT], person(timezone=None), NOON, DEFAULT) == [REMINDER]
    assert choose([REMINDER, HABIT], person(inactive=True), NOON, DEFAULT) == []


def test_dont_suggest_again_declined_sent_and_future_occasions_are_not_chosen() -> None:
    assert choose([HABIT], person(disabled=frozenset({"habit"})), NOON, DEFAULT) == []
    assert choose([HABIT], person(declined=frozenset({HABIT.key})), NOON, DEFAULT) == []
    assert (
        choose(
            [HABIT], person(sent=[SentRecord(HABIT.key, "habit", NOON - timedelta(days=9))]), NOON, DEFAULT
        )
        == []
    )
    assert choose([occasion("habit", due=NOON + timedelta(minutes=1))], person(), NOON, DEFAULT) == []
    assert choose([REMINDER], person(disabled=frozenset({"reminder"})), NOON, DEFAULT) == [REMINDER], (
        "asked for"
    )
    assert is_dont_suggest_again(DONT_SUGGEST_AGAIN)


def test_a_trigger_below_the_success_floor_backs_off_for_the_person_then_tries_again() -> None:
    failures = [sent("habit", NOON - timedelta(days=10 - i), accepted=False, name=str(i)) for i in range(5)]
    assert success_rate(failures, "habit", DEFAULT) == 0.0
    assert backed_off_for(person(sent=failures), NOON, DEFAULT) == {"habit"}
    assert choose([HABIT], person(sent=failures), NOON, DEFAULT) == []
    assert choose([SESSION], person(sent=failures), NOON, DEFAULT) == [SESSION], "only that trigger rests"
    rested = NOON + DEFAULT.backoff_rest
    assert choose([occasion("habit", due=rested)], person(sent=failures), rested, DEFAULT), "one more try"
    four = failures[:4]
    assert success_rate(four, "habit", DEFAULT) is None and not backed_off_for(
        person(sent=four), NOON, DEFAULT
    )
    at_floor = [*failures[:4], sent("habit", NOON - timedelta(days=1), accepted=True, name="y")]
    assert success_rate(at_floor, "habit", DEFAULT) == 0.2 and not backed_off_for(
        person(sent=at_floor), NOON, DEFAULT
    )


def test_a_trigger_rests_for_everyone_when_the_ledger_says_too_few_accepted_it() -> None:
    rates = [
        TriggerRate("follow_up", sent=6, accepted=1, dismissed=5),  # 1 of 6: below the 0.2 floor
        TriggerRate("habit", sent=6, accepted=3, dismissed=3),
        TriggerRate("reminder", sent=6, accepted=0, dismissed=6),  # asked for: never rests
        TriggerRate("long_session", sent=2, accepted=0, dismissed=2),  # too few outcomes to judge
    ]
    policy = replace(DEFAULT, backed_off=backed_off(rates, DEFAULT))
    assert policy.backed_off == {"follow_up"}
    assert choose([FOLLOW_UP], person(), NOON, policy) == []


@pytest.mark.parametrize(
    "reply",
    ["no thanks", "No", "stop", "don't", "not now", "nah, I'm good", "👎", "Don't suggest this again"],
)
def test_declines(reply: str) -> None:
    assert is_decline(reply) and not is_acceptance(reply)


@pytest.mark.parametrize(
    "reply", ["yes", "sure!", "ok", "sounds good", "no problem, I'll go", "why not", "haha I was about to"]
)
def test_acceptances(reply: str) -> None:
    assert is_acceptance(reply) and not is_decline(reply)


def test_a_reply_counts_only_within_two_hours() -> None:
    record = sent("habit", NOON)
    assert outcome(record, "great idea", NOON + timedelta(hours=2), DEFAULT) is True
    assert outcome(record, "no thanks", NOON + timedelta(minutes=5), DEFAULT) is False
    assert outcome(record, "great idea", NOON + timedelta(hours=2, seconds=1), DEFAULT) is None
    assert outcome(record, "   ", NOON + timedelta(minutes=5), DEFAULT) is None


def test_a_reminder_set_in_quiet_hours_says_when_it_will_ring() -> None:
    quiet = person(**NIGHT).settings
    london = zone("Europe/London")
    assert london is not None
    late = datetime(2026, 11, 4, 23, 30, tzinfo=UTC)
    assert quiet_until(late, quiet, london) == datetime(2026, 11, 5, 7, 0, tzinfo=UTC)
    early = datetime(2026, 11, 5, 3, 0, tzinfo=UTC)
    assert quiet_until(early, quiet, london) == datetime(2026, 11, 5, 7, 0, tzinfo=UTC)
    assert quiet_until(NOON, quiet, london) is None
