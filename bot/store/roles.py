"""The roles a store is made of, each one Protocol of a room's `ports.py`, sharing one connection.

Both stores are made of them: `SqliteStore` of the roles in bot/store/sqlite/ over one file,
`PostgresStore` of those in bot/store/postgres/ over one pool. Callers use the roles themselves
(`store.turns`, `store.memories`, ...); the dialect store adds what is not a role: opening,
migrations, stats, daily activity, upkeep and closing.
"""

from __future__ import annotations

from bot.core.chat.ports import TurnLog
from bot.core.learning.ports import AdapterRegistry, LearningLog, RewardLog
from bot.core.memory.ports import MemoryCuration, MemoryIndex


class StoreRoles:
    """The Store Protocol's roles, one object each."""

    def __init__(
        self,
        turns: TurnLog,
        memories: MemoryIndex,
        curation: MemoryCuration,
        rewards: RewardLog,
        learning: LearningLog,
        registry: AdapterRegistry,
    ) -> None:
        self.turns = turns
        self.memories = memories
        self.curation = curation
        self.rewards = rewards
        self.learning = learning
        self.adapters = registry
