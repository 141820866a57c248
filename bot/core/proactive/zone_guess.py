"""A first guess at a person's UTC offset from when they write, to ask them to confirm.

People rarely write in the middle of their night: the quietest six hours of their day, in UTC,
are taken to be 01:00–07:00 on their clock. A guess needs enough messages over enough days; it is
only ever offered as a question ("are you on UTC+9, e.g. Asia/Tokyo?"), never used unconfirmed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, available_timezones

from bot.core.proactive.models import Activity

MIN_MESSAGES = 40
MIN_DAYS = 7
NIGHT_HOURS = 6
NIGHT_MIDDLE = 4  # 04:00 local: the middle of 01:00–07:00


def likely_offset(activity: Sequence[Activity]) -> timedelta | None:
    """The whole-hour UTC offset the person's quiet hours suggest, or None on too little activity."""
    if len(activity) < MIN_MESSAGES or len({a.at.astimezone(UTC).date() for a in activity}) < MIN_DAYS:
        return None
    hours = Counter(a.at.astimezone(UTC).hour for a in activity)
    counts = [sum(hours[(start + h) % 24] for h in range(NIGHT_HOURS)) for start in range(24)]
    quietest = _middle_of_run([start for start in range(24) if counts[start] == min(counts)])
    middle = (quietest + NIGHT_HOURS // 2) % 24
    offset = (NIGHT_MIDDLE - middle + 12) % 24 - 12  # into -12 … +11
    return timedelta(hours=offset)


def _middle_of_run(starts: list[int]) -> int:
    """The middle of the longest circular run of tied window starts: a long night's centre, not its edge."""
    best: list[int] = []
    for first in starts:
        if (first - 1) % 24 in starts and len(starts) < 24:
            continue  # not the start of a run
        run = [first]
        while (run[-1] + 1) % 24 in starts and len(run) < len(starts):
            run.append((run[-1] + 1) % 24)
        best = max(best, run, key=len)
    return best[len(best) // 2] if best else starts[0]


def zones_at_offset(offset: timedelta, at: datetime, limit: int = 3) -> list[str]:
    """A few well-known zones on `offset` at `at`, to name in the question (continents' zones first)."""
    found = []
    for name in sorted(available_timezones()):
        if "/" not in name or name.startswith(("Etc/", "SystemV/", "US/", "Canada/", "Brazil/", "Mexico/")):
            continue
        if at.astimezone(ZoneInfo(name)).utcoffset() == offset:
            found.append(name)
    major = [n for n in found if n.split("/")[0] in ("Europe", "America", "Asia", "Australia", "Africa")]
    return (major or found)[:limit]
