"""A budget's periods: the person's day and month, in their time zone where Kindred knows it
(they told /proactive timezone), else UTC; a group chat's in UTC. Each resets at its midnight."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo

from bot.core.proactive import zone as proactive_zone


def zone(name: str | None) -> tzinfo:
    """The IANA zone called `name` (as the proactive room reads it); UTC for None or a name this
    machine does not know."""
    return proactive_zone(name) or UTC


def local_day(at: datetime, tz: tzinfo) -> date:
    return at.astimezone(tz).date()


def month_of(day: date) -> tuple[date, date]:
    """The first and last day of `day`'s month."""
    after = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
    return day.replace(day=1), after - timedelta(days=1)


def next_midnight(at: datetime, tz: tzinfo, *, month: bool = False) -> datetime:
    """When the day (or, with `month`, the month) that holds `at` in `tz` ends, in UTC."""
    day = local_day(at, tz)
    end = month_of(day)[1] if month else day
    return datetime.combine(end + timedelta(days=1), time(0), tzinfo=tz).astimezone(UTC)


def in_words(wait: timedelta) -> str:
    """A wait as a person reads it: "3 h 12 min", "40 min", "under a minute"."""
    minutes = int(wait.total_seconds() // 60)
    if minutes < 1:
        return "under a minute"
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} d"] if days else []
    if hours:
        parts.append(f"{hours} h")
    if minutes and not days:
        parts.append(f"{minutes} min")
    return " ".join(parts)
