"""The usage room's boundary: where the records are kept, so that every process sees them."""

from __future__ import annotations

from datetime import date
from typing import Protocol

from bot.core.usage.models import UsageDay, UsageRecord


class UsageLog(Protocol):
    """Usage records, summed per person (and per group chat) and UTC day."""

    async def record(self, record: UsageRecord) -> None:
        """Keep one use, counted on the UTC day of `record.at`."""
        ...

    async def days(self, first: date, last: date, who: str | None = None) -> list[UsageDay]:
        """Each person's and each group chat's totals per day from `first` to `last`, both
        included, ordered by day then who (people before groups); only days with a use. `who`:
        only that person's rows, or that group chat's."""
        ...

    async def records(self, user_id: str) -> list[UsageRecord]:
        """Every record of one person, oldest first (for /export)."""
        ...
