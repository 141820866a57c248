"""A guessed UTC offset from when a person writes, offered for confirmation."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from bot.core.proactive.models import Activity
from bot.core.proactive.zone_guess import likely_offset, zones_at_offset

T0 = datetime(2026, 11, 2, tzinfo=UTC)


def awake(offset_hours: int, days: int = 14, seed: int = 3) -> list[Activity]:
    """Messages between 08:00 and 23:00 on a clock `offset_hours` ahead of UTC."""
    rng = random.Random(seed)
    return sorted(
        (
            Activity(at=T0 + timedelta(days=day, hours=rng.uniform(8, 23) - offset_hours), text="hi")
            for day in range(days)
            for _ in range(6)
        ),
        key=lambda a: a.at,
    )


def test_the_quiet_night_gives_the_offset() -> None:
    for hours in (9, 0, -5, -8, 1, 10):
        assert likely_offset(awake(hours)) == timedelta(hours=hours), hours


def test_too_little_activity_gives_no_guess() -> None:
    assert likely_offset(awake(9, days=3)) is None
    assert likely_offset(awake(9)[:20]) is None


def test_zones_named_for_an_offset_are_on_it_then() -> None:
    names = zones_at_offset(timedelta(hours=9), T0)
    assert names and all(name.startswith(("Asia/", "Australia/")) for name in names), names
    assert "Europe/London" in zones_at_offset(timedelta(0), T0, limit=100)
    assert "Europe/London" not in zones_at_offset(timedelta(0), datetime(2026, 7, 1, tzinfo=UTC), limit=100)
