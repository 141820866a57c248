"""Usage as people and admins read it: `kindred usage --json`'s lines and `/usage`'s answer,
from the same sums, so that the two always agree."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from bot.core.usage.models import UsageDay
from bot.core.usage.ports import UsageLog

NOTHING_YET = "nothing yet"


def usage_line(day: UsageDay) -> dict[str, Any]:
    """One person's (or group chat's) day as `kindred usage --json` prints it. No budgets yet:
    `cost` 0.0 and `budget_left` null."""
    who = {"group": day.who} if day.group else {"user": day.who}
    return {
        **who,
        "day": day.day.isoformat(),
        "tokens_in": day.tokens_in,
        "tokens_out": day.tokens_out,
        "cost": 0.0,
        "budget_left": None,
        "replies": day.replies,
        "voice_seconds": round(day.voice_seconds, 1),
        "images": day.images,
        "proactive": day.proactive,
        "app_builds": day.app_builds,
    }


def summed(days: list[UsageDay], who: str) -> UsageDay:
    """The days' totals as one (its day: the last one's, or today's when there is none)."""
    last = days[-1].day if days else datetime.now(UTC).date()
    return UsageDay(
        who, last, False,
        sum(d.tokens_in for d in days), sum(d.tokens_out for d in days), sum(d.replies for d in days),
        sum(d.voice_seconds for d in days), sum(d.images for d in days), sum(d.proactive for d in days),
        sum(d.app_builds for d in days),
    )  # fmt: skip


def spoken(total: UsageDay) -> str:
    """A period's use in words, for the person."""
    if not (total.replies or total.voice_seconds or total.images or total.proactive or total.app_builds):
        return NOTHING_YET
    parts = [
        f"{total.tokens_in:,} tokens in, {total.tokens_out:,} out ({_n(total.replies, 'reply', 'replies')})"
    ]
    if total.voice_seconds:
        parts.append(f"{total.voice_seconds:.0f} s of voice notes")
    if total.images:
        parts.append(_n(total.images, "image", "images"))
    if total.proactive:
        parts.append(_n(total.proactive, "message I started", "messages I started"))
    if total.app_builds:
        parts.append(_n(total.app_builds, "app build", "app builds"))
    return ", ".join(parts)


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


class UsageReport:
    """The sums behind `/usage` and `kindred usage`."""

    def __init__(self, usage: UsageLog, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._usage = usage
        self._clock = clock

    def today(self) -> date:
        return self._clock().astimezone(UTC).date()

    async def lines(self, first: date, last: date, who: str | None = None) -> list[dict[str, Any]]:
        """`kindred usage --json`'s objects, one per person (or group chat) and day."""
        return [usage_line(day) for day in await self._usage.days(first, last, who)]

    async def command(self, user_id: str) -> str:
        """/usage: the person's use today and this month (UTC days, as the CLI counts them)."""
        today = self.today()
        days = [d for d in await self._usage.days(today.replace(day=1), today, user_id) if not d.group]
        now = summed([d for d in days if d.day == today], user_id)
        month = summed(days, user_id)
        return (
            f"Your use (UTC days)\nToday: {spoken(now)}\nThis month: {spoken(month)}\n"
            "No budget is set, so nothing is left to count down."
        )
