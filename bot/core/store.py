"""The store: one connection, and a role object per Protocol on it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    # Named only in annotations: importing the rooms that use the Store from here would be a circle.
    from bot.core.chat.ports import DeliveryLog, TurnLog
    from bot.core.chat_models.ports import ModelChoices
    from bot.core.learning.ports import AdapterRegistry, LearningLog, RewardLog, Trials
    from bot.core.memory.ports import MemoryCuration, MemoryIndex
    from bot.core.miniapps.ports import AppStore
    from bot.core.models import DayStats, Stats
    from bot.core.personas.ports import PersonaChoices
    from bot.core.proactive.ports import ProactiveStore
    from bot.core.usage.ports import UsageLog


class Store(Protocol):
    """One connection (a SQLite file, a PostgreSQL pool) and a role object per Protocol on it.
    Callers use the roles: `store.turns.add_turn(...)`, `store.memories.dense_search(...)`."""

    backend: str

    @property
    def turns(self) -> TurnLog:
        """Turns, feedback on them, platform message links, who is active."""
        ...

    @property
    def deliveries(self) -> DeliveryLog:
        """Replies whose delivery is unknown, until confirmed or sent again."""
        ...

    @property
    def memories(self) -> MemoryIndex:
        """Memories: writing, dense and lexical search, listing, forgetting."""
        ...

    @property
    def curation(self) -> MemoryCuration:
        """Revising memories and where they came from."""
        ...

    @property
    def rewards(self) -> RewardLog:
        """What replies earned, and the memories that reward reached."""
        ...

    @property
    def learning(self) -> LearningLog:
        """Rated replies, training consent and each night's examples."""
        ...

    @property
    def adapters(self) -> AdapterRegistry:
        """The adapter versions and training runs."""
        ...

    @property
    def trials(self) -> Trials:
        """Reward models and canaries ([canary])."""
        ...

    @property
    def miniapps(self) -> AppStore:
        """The mini-apps."""
        ...

    @property
    def personas(self) -> PersonaChoices:
        """Each chat's persona ([personal] 2)."""
        ...

    @property
    def models(self) -> ModelChoices:
        """Each chat's model ([personal] 3)."""
        ...

    @property
    def proactive(self) -> ProactiveStore:
        """The proactive check-ins' settings, reminders and sent ledger."""
        ...

    @property
    def usage(self) -> UsageLog:
        """What each person used: replies' tokens, voice seconds, images, proactive messages, builds."""
        ...

    # The size of the vectors this store holds, and the model and size that embedded its newest
    # memory (None while it has none): an embedder that does not match them is refused at start.
    vector_dim: int

    async def memories_embedder(self) -> tuple[str, int] | None: ...

    async def stats(self) -> Stats: ...

    async def daily_activity(self, days: int) -> list[DayStats]:
        """The last `days` UTC days, today included, oldest first; a quiet day counts zeros."""
        ...

    async def maintain(self) -> list[str]:
        """Routine upkeep (planner statistics, journal checkpoint). Returns what it did."""
        ...

    async def close(self) -> None: ...
