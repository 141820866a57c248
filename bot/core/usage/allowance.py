"""Budgets kept: a reply holds room for the most it can use before it is written, and gives the
room back once its use is counted. Across replicas that share the holds (Redis), a budget is
overspent by at most the replies already in flight when it ran out, one per chat: a reply that
started always finishes; the next is refused, with when the budget renews.

What counts is the store's record of what was used (every process sees it), plus the room held
for the replies in flight; a reply goes ahead while any room is left."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from bot.core.errors import StoreUnavailable
from bot.core.usage.budgets import Limits, Tier
from bot.core.usage.meter import UsageMeter
from bot.core.usage.models import Spent
from bot.core.usage.periods import in_words, local_day, next_midnight
from bot.core.usage.ports import BudgetSource, Check, Holds, Measure, UsageLog

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Held:
    """The room one reply holds: (subject, hold id) for the person and for their group chat."""

    holds: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class OutOfBudget:
    text: str


@dataclass(frozen=True, slots=True)
class Standing:
    """One person's (or group chat's) budget now: used and left per period, None where unlimited."""

    limits: Limits
    day: Spent
    month: Spent
    currency: str

    def left(self) -> dict[str, float | int] | None:
        """What is left of each limit, as `kindred usage --json` prints it; None: no budget."""
        if self.limits.empty:
            return None
        pairs = {
            "tokens_today": (self.limits.tokens_per_day, self.day.tokens),
            "tokens_this_month": (self.limits.tokens_per_month, self.month.tokens),
            "cost_today": (self.limits.cost_per_day, self.day.cost),
            "cost_this_month": (self.limits.cost_per_month, self.month.cost),
        }
        left: dict[str, float | int] = {}
        for name, (limit, used) in pairs.items():
            if limit is not None:
                left[name] = (
                    max(0, limit - used) if name.startswith("tokens") else round(max(0.0, limit - used), 6)
                )
        return left


class Allowance:
    # Past this a hold lapses by itself: a replica that died mid-reply gives its room back.
    HOLD_S = 600

    def __init__(
        self,
        usage: UsageLog,
        holds: Holds,
        budgets: BudgetSource,
        meter: UsageMeter,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._usage = usage
        self._holds = holds
        self._budgets = budgets
        self._meter = meter
        self._clock = clock

    def limits(self, user_id: str, tier: Tier, group_id: str | None) -> list[tuple[str, bool, Limits]]:
        """Each budget a use by this person (in this group chat) counts against, with limits."""
        book = self._budgets.budgets()
        subjects = [(user_id, False, book.person(user_id, tier))]
        if group_id is not None:
            subjects.append((group_id, True, book.group(group_id)))
        return [s for s in subjects if not s[2].empty]

    def budget(self, who: str, *, group: bool, tier: Tier = "member") -> Limits:
        """One person's budget, or one group chat's."""
        book = self._budgets.budgets()
        return book.group(who) if group else book.person(who, tier)

    async def standing(self, who: str, limits: Limits, *, group: bool) -> Standing:
        tz = UTC if group else await self._meter.zones.of(who)
        day, month = await self._usage.spent(who, local_day(self._clock(), tz), group=group)
        return Standing(limits, day, month, self._meter.prices.currency)

    async def reserve(
        self, user_id: str, tier: Tier, group_id: str | None, model: str, tokens_in: int, tokens_out: int
    ) -> Held | OutOfBudget:
        """Hold room for a reply of at most these tokens, or say why there is none left."""
        subjects = self.limits(user_id, tier, group_id)
        if not subjects:
            return Held()
        cost = self._meter.cost(model, tokens_in, tokens_out)
        taken: list[tuple[str, str]] = []
        for who, group, limits in subjects:
            try:
                standing = await self.standing(who, limits, group=group)
            except StoreUnavailable as exc:
                # The reply matters more than its count: with the store down, nothing is refused.
                log.warning("budgets: cannot read %s's use (%s); this reply is not held", who, exc)
                continue
            hold_id = uuid.uuid4().hex
            if not await self._holds.take(who, hold_id, tokens_in + tokens_out, cost, _checks(standing)):
                await self.release(Held(tuple(taken)))
                return OutOfBudget(await self._refusal(who, group, standing))
            taken.append((who, hold_id))
        return Held(tuple(taken))

    async def release(self, held: Held) -> None:
        for who, hold_id in held.holds:
            await self._holds.release(who, hold_id)

    async def _refusal(self, who: str, group: bool, standing: Standing) -> str:
        """Which budget ran out, and when it renews, in the person's (or UTC's) midnight."""
        limits, day, month = standing.limits, standing.day, standing.month
        monthly = _reached(limits.tokens_per_month, month.tokens) or _reached(
            limits.cost_per_month, month.cost
        )
        tz: tzinfo = UTC if group else await self._meter.zones.of(who)
        now = self._clock()
        renews = next_midnight(now, tz, month=monthly)
        if monthly:
            limit = _amount(limits.tokens_per_month, limits.cost_per_month, month, standing.currency)
        else:
            limit = _amount(limits.tokens_per_day, limits.cost_per_day, day, standing.currency)
        period = "this month" if monthly else "today"
        whose = "This group has used its" if group else "You've used your"
        where = "UTC" if tz is UTC else f"your time ({getattr(tz, 'key', tz)})"
        when = f"on {renews.astimezone(tz):%-d %B}" if monthly else "at midnight"
        return (
            f"{whose} allowance for {period} ({limit}). It renews {when}, {where}: "
            f"in {in_words(renews - now)}. Your message is kept."
        )


def _checks(standing: Standing) -> list[Check]:
    limits, day, month = standing.limits, standing.day, standing.month
    pairs: list[tuple[Measure, float | None, float]] = [
        ("tokens", limits.tokens_per_day, day.tokens),
        ("tokens", limits.tokens_per_month, month.tokens),
        ("cost", limits.cost_per_day, day.cost),
        ("cost", limits.cost_per_month, month.cost),
    ]
    return [Check(m, float(used), float(limit)) for m, limit, used in pairs if limit is not None]


def _reached(limit: float | None, used: float) -> bool:
    return limit is not None and used >= limit


def _amount(tokens: int | None, cost: float | None, used: Spent, currency: str) -> str:
    """The limit that was reached (or that the replies in flight fill), in words."""
    if tokens is not None and (used.tokens >= tokens or cost is None):
        return f"{tokens:,} token{'' if tokens == 1 else 's'}"
    return f"{cost:.2f} {currency}".strip() if cost is not None else "its limit"
