"""The store: one connection, a role object per room on it (`store.apps`, `store.proactive`), and
the roles it plays itself (turns, memories, curation, reactions, learning, adapters)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from bot.core.chat.ports import TurnLog
from bot.core.learning.ports import LearningLog, RewardLog
from bot.core.memory.ports import MemoryCuration, MemoryIndex

if TYPE_CHECKING:
    # Named only in annotations: importing the rooms that use the Store from here would be a circle.
    from bot.core.learning.ports import AdapterRegistry
    from bot.core.miniapps.ports import AppStore
    from bot.core.models import DayStats, Stats
    from bot.core.proactive.ports import ProactiveStore


class Store(TurnLog, MemoryIndex, MemoryCuration, RewardLog, LearningLog, Protocol):
    backend: str

    @property
    def adapters(self) -> AdapterRegistry:
        """The adapter versions and training runs, on the same connection."""
        ...

    @property
    def apps(self) -> AppStore:
        """The mini-apps, on the same connection."""
        ...

    @property
    def proactive(self) -> ProactiveStore:
        """The proactive check-ins' settings, reminders and sent ledger, on the same connection."""
        ...

    async def stats(self) -> Stats: ...

    async def daily_activity(self, days: int) -> list[DayStats]:
        """The last `days` UTC days, today included, oldest first; a quiet day counts zeros."""
        ...

    async def maintain(self) -> list[str]:
        """Routine upkeep (planner statistics, journal checkpoint). Returns what it did."""
        ...

    async def close(self) -> None: ...
