"""Each person's time zone, as they told /proactive: where their budget's day begins."""

from __future__ import annotations

from bot.core.proactive.ports import ProactiveSettingsLog


class StoreZones:
    def __init__(self, settings: ProactiveSettingsLog) -> None:
        self._settings = settings

    async def zone(self, user_id: str) -> str | None:
        return (await self._settings.proactive_settings(user_id)).timezone
