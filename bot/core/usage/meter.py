"""Counting a use as it happens: one record per reply (every sample of a best-of-n), voice note,
image, proactive message or app build, with its cost at the model's price and on the person's own
day. Counting never fails what it counts."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo

from bot.core.errors import StoreUnavailable
from bot.core.usage.models import UsageKind, UsageRecord
from bot.core.usage.periods import local_day, zone
from bot.core.usage.ports import Prices, UsageLog, Zones

log = logging.getLogger(__name__)


class NoPrices:
    """No models list: every use costs nothing."""

    currency = ""

    def price(self, model: str) -> None:
        return None


class NoZones:
    async def zone(self, user_id: str) -> str | None:
        return None


class ZoneCache:
    """Each person's time zone, asked for at most once a few minutes: every reply needs it."""

    TTL_S = 300.0
    SIZE = 10_000

    def __init__(self, zones: Zones) -> None:
        self._zones = zones
        self._known: OrderedDict[str, tuple[float, tzinfo]] = OrderedDict()

    async def of(self, user_id: str) -> tzinfo:
        now = time.monotonic()
        found = self._known.get(user_id)
        if found is not None and found[0] > now:
            return found[1]
        try:
            tz = zone(await self._zones.zone(user_id))
        except StoreUnavailable:
            return found[1] if found else UTC
        self._known[user_id] = (now + self.TTL_S, tz)
        self._known.move_to_end(user_id)
        while len(self._known) > self.SIZE:
            self._known.popitem(last=False)
        return tz


class UsageMeter:
    def __init__(
        self,
        usage: UsageLog,
        *,
        prices: Prices | None = None,
        zones: ZoneCache | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._usage = usage
        self.prices: Prices = prices or NoPrices()
        self.zones = zones or ZoneCache(NoZones())
        self._clock = clock

    def cost(self, model: str, tokens_in: int, tokens_out: int) -> float:
        price = self.prices.price(model) if model else None
        return price.of(tokens_in, tokens_out) if price else 0.0

    async def count(
        self,
        user_id: str,
        kind: UsageKind,
        *,
        group_id: str | None = None,
        tokens_in: int = 0,
        tokens_out: int = 0,
        amount: float = 1.0,
        model: str = "",
        at: datetime | None = None,
    ) -> None:
        """Record one use (now, unless `at` says when). With the store down the use goes
        uncounted (logged): the person's reply, note or build matters more than its count."""
        at = at or self._clock()
        tokens_in, tokens_out = max(0, tokens_in), max(0, tokens_out)
        day = local_day(at, await self.zones.of(user_id))
        cost = self.cost(model, tokens_in, tokens_out)
        record = UsageRecord(user_id, kind, at, tokens_in, tokens_out, amount, group_id, model, cost, day)
        try:
            await self._usage.record(record)
        except StoreUnavailable as exc:
            log.warning("a %s use of %s went uncounted: %s", kind, user_id, exc)
