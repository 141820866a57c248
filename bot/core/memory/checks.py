"""External checks: the hook where a data source can verify or retire memories.

A check looks at one memory and may return a `Verdict`. `run_checks` applies the verdicts during
memory upkeep. The one shipped today needs no outside source: an event whose date has passed is
marked `past` (still recalled, but shown as past, so "my exam is on Friday" is not brought up as
coming). A future check ("is this restaurant still open?") implements the same Protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from bot.core.memory import operations
from bot.core.memory.curation import CurationStore
from bot.core.models import Memory, Revision


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a check concluded; None fields leave the memory as it is."""

    status: str | None = None
    verification: float | None = None
    note: str = ""


class MemoryCheck(Protocol):
    name: str

    async def check(self, memory: Memory, now: datetime) -> Verdict | None:
        """A verdict on `memory` as of `now`, or None when this check has nothing to say."""
        ...


class EventDatePassed:
    """An event with a date (`meta.event_date`, set by extraction) is past once that day is over."""

    name = "event_date_passed"

    async def check(self, memory: Memory, now: datetime) -> Verdict | None:
        if memory.kind != "event" or memory.status != "active":
            return None
        value = memory.meta.get("event_date")
        if not isinstance(value, str):
            return None
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return None
        if day < now.date():
            return Verdict(status="past", note=f"its date, {day.isoformat()}, has passed")
        return None


SHIPPED_CHECKS: tuple[MemoryCheck, ...] = (EventDatePassed(),)


async def run_checks(
    store: CurationStore, user_id: str, now: datetime, checks: Sequence[MemoryCheck] = SHIPPED_CHECKS
) -> dict[str, int]:
    """Every check over one person's active memories. Returns how many each check changed."""
    changed = {check.name: 0 for check in checks}
    async for memory in operations.all_memories(store.memories, user_id):
        if memory.status != "active":
            continue
        for check in checks:
            verdict = await check.check(memory, now)
            if verdict is None:
                continue
            revision = Revision(status=verdict.status, verification=verdict.verification, updated_at=now)
            if await store.curation.revise_memory(user_id, memory.id, revision):
                changed[check.name] += 1
    return changed
