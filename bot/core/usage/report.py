"""Usage as people and admins read it: `kindred usage --json`'s lines and `/usage`'s answer,
from the same sums, so that the two always agree."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from bot.core.usage.allowance import Allowance, Standing
from bot.core.usage.budgets import Tier
from bot.core.usage.meter import UsageMeter
from bot.core.usage.models import UsageDay
from bot.core.usage.periods import in_words, local_day, next_midnight
from bot.core.usage.ports import UsageLog

NOTHING_YET = "nothing yet"


def usage_line(day: UsageDay, left: dict[str, float | int] | None = None) -> dict[str, Any]:
    """One person's (or group chat's) day as `kindred usage --json` prints it. `budget_left`:
    what is left of each limit, on the person's current day only; null without a budget."""
    who = {"group": day.who} if day.group else {"user": day.who}
    return {
        **who,
        "day": day.day.isoformat(),
        "tokens_in": day.tokens_in,
        "tokens_out": day.tokens_out,
        "cost": round(day.cost, 6),
        "budget_left": left,
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
        sum(d.app_builds for d in days), sum(d.cost for d in days),
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
    """The sums behind `/usage`, `/admin` and `kindred usage`."""

    def __init__(
        self,
        usage: UsageLog,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        allowance: Allowance | None = None,
        meter: UsageMeter | None = None,
        tier: Callable[[str], Tier] = lambda user_id: "member",
    ) -> None:
        self._usage = usage
        self._clock = clock
        self._allowance = allowance
        self._meter = meter or UsageMeter(usage, clock=clock)
        self._tier = tier

    def today(self) -> date:
        return self._clock().astimezone(UTC).date()

    async def lines(self, first: date, last: date, who: str | None = None) -> list[dict[str, Any]]:
        """`kindred usage --json`'s objects, one per person (or group chat) and day."""
        lines = []
        for day in await self._usage.days(first, last, who):
            standing = await self.standing(day.who, group=day.group)
            current = standing is not None and day.day == await self._day(day.who, group=day.group)
            lines.append(usage_line(day, standing.left() if standing and current else None))
        return lines

    async def today_lines(self, who: str | None = None) -> list[dict[str, Any]]:
        """Each person's line for their own today (east of UTC it may be tomorrow's date, west of
        it yesterday's), and each group chat's for UTC's today."""
        utc = self.today()
        lines = await self.lines(utc - timedelta(days=1), utc + timedelta(days=1), who)
        today = []
        for line in lines:
            group = "group" in line
            if (
                line["day"]
                == (await self._day(line["group"] if group else line["user"], group=group)).isoformat()
            ):
                today.append(line)
        return today

    async def standing(self, who: str, *, group: bool = False) -> Standing | None:
        """Where the person (or group chat) stands against their budget; None: they have none."""
        if self._allowance is None:
            return None
        found = (
            self._allowance.limits(who, "member", who)
            if group
            else self._allowance.limits(who, self._tier(who), None)
        )
        if not found:
            return None
        _, _, limits = found[-1] if group else found[0]
        return await self._allowance.standing(who, limits, group=group)

    async def command(self, user_id: str) -> str:
        """/usage: the person's use today and this month (their days), and what is left."""
        tz = await self._meter.zones.of(user_id)
        today = local_day(self._clock(), tz)
        days = [d for d in await self._usage.days(today.replace(day=1), today, user_id) if not d.group]
        now = summed([d for d in days if d.day == today], user_id)
        month = summed(days, user_id)
        where = "UTC days" if tz is UTC else f"your days, {getattr(tz, 'key', tz)}"
        text = f"Your use ({where})\nToday: {spoken(now)}\nThis month: {spoken(month)}\n"
        standing = await self.standing(user_id)
        if standing is None:
            return text + "No budget is set, so nothing is left to count down."
        return text + self._left_words(standing, tz)

    def _left_words(self, standing: Standing, tz: Any) -> str:
        left = standing.left() or {}
        money = standing.currency
        shown = {
            "tokens_today": "{:,} tokens today", "tokens_this_month": "{:,} tokens this month",
            "cost_today": "{:.2f} " + money + " today", "cost_this_month": "{:.2f} " + money + " this month",
        }  # fmt: skip
        parts = [shown[name].format(value).replace(" ", " ").strip() for name, value in left.items()]
        now = self._clock()
        return f"Left: {', '.join(parts)}. Today's renews in {in_words(next_midnight(now, tz) - now)}."

    async def _day(self, who: str, *, group: bool) -> date:
        return local_day(self._clock(), UTC if group else await self._meter.zones.of(who))
