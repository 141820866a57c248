"""A person's local time: their IANA zone (stdlib zoneinfo), and the clock readings the triggers use."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.core.proactive.models import ProactiveSettings


def zone(name: str | None) -> ZoneInfo | None:
    """The zone named `name`, or None when it is unknown or not a zone at all."""
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def settings_zone(settings: ProactiveSettings) -> ZoneInfo | None:
    return zone(settings.timezone)


def wall_to_utc(day: date, at: time, tz: ZoneInfo) -> datetime:
    """The UTC instant of the wall-clock reading `day at` in `tz`.

    A reading in a spring-forward gap (01:30 in London on the last Sunday of March) does not exist;
    it is moved forward by the gap, as a clock that was not changed yet would read it.
    """
    # PEP 495: with fold=0 a reading in the gap takes the offset from before it, which lands the
    # given number of minutes past the gap's end; a repeated autumn reading means its first pass.
    return datetime.combine(day, at, tzinfo=tz).astimezone(UTC)


def in_quiet_hours(now: datetime, settings: ProactiveSettings, tz: ZoneInfo) -> bool:
    """Whether `now` falls in the person's quiet hours, which may wrap midnight (22:00–08:00)."""
    local = now.astimezone(tz).time()
    start, end = settings.quiet_start, settings.quiet_end
    if start == end:
        return False
    if start < end:
        return start <= local < end
    return local >= start or local < end


def quiet_until(at: datetime, settings: ProactiveSettings, tz: ZoneInfo) -> datetime | None:
    """When quiet hours holding `at` end (UTC), or None when `at` is not in quiet hours.

    A reminder due then rings at that time: the confirmation can say so when it is set.
    """
    if not in_quiet_hours(at, settings, tz):
        return None
    local = at.astimezone(tz)
    day = local.date() if local.time() < settings.quiet_end else local.date() + timedelta(days=1)
    return wall_to_utc(day, settings.quiet_end, tz)
