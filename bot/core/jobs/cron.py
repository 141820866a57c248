"""5-field crontab expressions (minute hour day-of-month month day-of-week), UTC, as beat reads them.

The same strings drive Celery beat (`workers/schedule.py`) and the in-process schedule of
`kindred run` (`bot/jobs/schedule.py`), so both must agree on what they mean. Each field takes
`*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, and comma-separated lists of those; months
and weekdays also take English three-letter names. Weekdays run 0 (Sunday) to 6: Celery refuses 7.
As in Celery's `crontab` (unlike classic cron), a time matches only when day-of-month and
day-of-week both do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.errors import ConfigError

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (lowest, highest, names by their value) per field, in the expression's order.
_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, {name: i + 1 for i, name in enumerate(MONTHS)}),
    (0, 6, {name: i for i, name in enumerate(WEEKDAYS)}),
)


@dataclass(frozen=True, slots=True)
class Cron:
    """A parsed expression: the values each field allows."""

    expression: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday … 6 = Saturday

    def matches(self, at: datetime) -> bool:
        """Whether the minute of `at` (read in its own time zone; pass UTC) is due."""
        weekday = at.isoweekday() % 7
        return (
            at.minute in self.minutes
            and at.hour in self.hours
            and at.day in self.days
            and at.month in self.months
            and weekday in self.weekdays
        )


def parse_cron(expression: str, setting: str) -> Cron:
    """Parse a 5-field expression; ConfigError names `setting` (the environment variable)."""
    fields = expression.split()
    if len(fields) != 5:
        raise ConfigError(f"invalid configuration: {setting}: needs 5 crontab fields, got {len(fields)}")
    try:
        values = [_field(text, *spec) for text, spec in zip(fields, _FIELDS, strict=True)]
    except ValueError as exc:
        raise ConfigError(f"invalid configuration: {setting}: {exc}") from None
    minutes, hours, days, months, weekdays = values
    return Cron(expression, minutes, hours, days, months, weekdays)


def _field(text: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    found: set[int] = set()
    for part in text.lower().split(","):
        span, _, step_text = part.partition("/")
        step = _number(step_text, names) if step_text else 1
        if step < 1:
            raise ValueError(f"step {step_text!r} must be at least 1")
        if span == "*":
            start, end = low, high
        elif "-" in span:
            first, _, last = span.partition("-")
            start, end = _number(first, names), _number(last, names)
        else:
            start = _number(span, names)
            end = high if step_text else start
        if not low <= start <= end <= high:
            raise ValueError(f"{part!r} is outside {low}-{high}")
        found.update(range(start, end + 1, step))
    return frozenset(found)


def _number(text: str, names: dict[str, int]) -> int:
    if text in names:
        return names[text]
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"{text!r} is not a number")
    return int(text)


@dataclass(frozen=True, slots=True)
class ScheduleEntry:
    """One periodic job: beat's entry `name` sends job `job` whenever `cron` is due."""

    name: str
    cron: Cron
    job: str
    payload: dict[str, object] | None = None
