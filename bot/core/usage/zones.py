"""Each person's time zone, as they told /proactive (or Kindred inferred it): where their day,
and so their budget's, begins ([personal] 1)."""

from __future__ import annotations

from bot.core.proactive.ports import ProactiveSettingsLog


class StoreZones:
    def __init__(self, settings: ProactiveSettingsLog) -> None:
        self._settings = settings

    async def zone(self, user_id: str) -> str | None:
        return (await self._settings.proactive_settings(user_id)).timezone
