"""Each person's time zone, as they told /proactive (or Kindred inferred it): where their day,
and so their budget's, begins ([personal] 1)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from bot.core.proactive.ports import ProactiveSettingsLog
from bot.core.store import Store
from bot.core.usage.meter import UsageMeter, ZoneCache
from bot.core.usage.ports import Prices


class StoreZones:
    def __init__(self, settings: ProactiveSettingsLog) -> None:
        self._settings = settings

    async def zone(self, user_id: str) -> str | None:
        return (await self._settings.proactive_settings(user_id)).timezone


def store_meter(
    store: Store, prices: Prices | None = None, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
) -> UsageMeter:
    """A meter over the store's usage, on each person's day as their /proactive time zone says."""
    return UsageMeter(store.usage, prices=prices, zones=ZoneCache(StoreZones(store.proactive)), clock=clock)
