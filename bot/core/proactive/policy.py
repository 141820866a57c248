"""Every threshold of the proactive check-ins, in one frozen dataclass: the issue's defaults.

The triggers and the manners read nothing else, so a test or the benchmark changes a threshold by
building another policy (`dataclasses.replace(DEFAULT, daily_cap=1)`), never by patching a module.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time, timedelta

# Long session: continuous activity (gaps shorter than the gap) for longer than the length.
SESSION_GAP = timedelta(minutes=30)
SESSION_LENGTH = timedelta(hours=3)
SESSION_COOLDOWN = timedelta(hours=12)  # one break suggestion per working day, at most
# Habit: at least this share of at least this many occurrences in one window, or on one weekday.
HABIT_SHARE = 0.8
HABIT_MIN_OCCURRENCES = 5
HABIT_WINDOW = timedelta(hours=2)
HABIT_LOOKBACK = timedelta(days=56)  # eight weeks: an old routine is not today's habit
# A habit recurs: its occurrences must spread over five weeks, or five runs in one week would do.
HABIT_MIN_SPAN = timedelta(days=35)  # tuned on the benchmark's dev seeds (docs/proactive.md)
HABIT_COOLDOWN = timedelta(days=7)  # one routine offered a week, however many habits show
# Follow-up: the morning after the event, asked while it is still fresh.
FOLLOW_UP_AT = time(10, 0)
FOLLOW_UP_STALE = timedelta(days=3)  # not asked at all once this long past its due time
FOLLOW_UP_LOOKBACK = timedelta(days=60)  # memories older than this hold no upcoming event
# Manners.
DAILY_CAP = 2  # proactive messages per local day; asked-for reminders do not count
MIN_SPACING = timedelta(hours=2)  # between two proactive messages to the same person
REPLY_WINDOW = timedelta(hours=2)  # a reply within this long that is no decline is an acceptance
# Back-off: a trigger whose recent success rate is below the floor rests for the rest period.
BACKOFF_FLOOR = 0.2
BACKOFF_MIN_OUTCOMES = 5  # no verdict on fewer outcomes than this
BACKOFF_RECENT = 10  # the rate is over the last this many outcomes
BACKOFF_REST = timedelta(days=30)


@dataclass(frozen=True, slots=True)
class ProactivePolicy:
    """The thresholds. `backed_off` names triggers resting for everyone (`backoff.backed_off`)."""

    session_gap: timedelta = SESSION_GAP
    session_length: timedelta = SESSION_LENGTH
    session_cooldown: timedelta = SESSION_COOLDOWN
    habit_share: float = HABIT_SHARE
    habit_min_occurrences: int = HABIT_MIN_OCCURRENCES
    habit_window: timedelta = HABIT_WINDOW
    habit_lookback: timedelta = HABIT_LOOKBACK
    habit_cooldown: timedelta = HABIT_COOLDOWN
    habit_min_span: timedelta = HABIT_MIN_SPAN
    follow_up_at: time = FOLLOW_UP_AT
    follow_up_stale: timedelta = FOLLOW_UP_STALE
    follow_up_lookback: timedelta = FOLLOW_UP_LOOKBACK
    daily_cap: int = DAILY_CAP
    min_spacing: timedelta = MIN_SPACING
    reply_window: timedelta = REPLY_WINDOW
    backoff_floor: float = BACKOFF_FLOOR
    backoff_min_outcomes: int = BACKOFF_MIN_OUTCOMES
    backoff_recent: int = BACKOFF_RECENT
    backoff_rest: timedelta = BACKOFF_REST
    backed_off: frozenset[str] = frozenset()


DEFAULT = ProactivePolicy()
