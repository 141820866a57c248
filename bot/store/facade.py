"""One Store made of six roles, each one Protocol of a room's `ports.py`, that share one connection.

Both stores build this: `SqliteStore` from the `sqlite_*` roles over one file, `PostgresStore` from
the `pg_*` roles over one pool. The façade only forwards; each role holds its own SQL. The dialect
store adds what is not a role: opening, migrations, stats, daily activity, upkeep and closing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.chat.ports import TurnLog
from bot.core.learning.models import (
    ExampleSnapshot,
    RatedReply,
    VersionRate,
)
from bot.core.learning.ports import AdapterRegistry, LearningLog, RewardLog
from bot.core.memory.ports import MemoryCuration, MemoryIndex
from bot.core.models import (
    Feedback,
    Memory,
    MemoryHit,
    MessageLink,
    NewMemory,
    NewTurn,
    ReplyRecord,
    Revision,
    Signal,
    Turn,
    Vector,
)


class StoreFacade:
    """The Store Protocol's methods, each forwarded to the role that owns it."""

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

    # -- TurnLog ---------------------------------------------------------------------------

    async def add_turn(self, turn: NewTurn) -> Turn:
        return await self.turns.add_turn(turn)

    async def recent_turns(self, user_id: str, chat_id: str, limit: int) -> list[Turn]:
        return await self.turns.recent_turns(user_id, chat_id, limit)

    async def record_feedback(self, feedback: Feedback) -> None:
        await self.turns.record_feedback(feedback)

    async def remove_feedback(self, turn_id: int, user_id: str, source: str) -> None:
        await self.turns.remove_feedback(turn_id, user_id, source)

    async def link_message(self, link: MessageLink) -> None:
        await self.turns.link_message(link)

    async def find_message(self, platform: str, chat_id: str, message_id: str) -> MessageLink | None:
        return await self.turns.find_message(platform, chat_id, message_id)

    async def set_user_active(self, user_id: str, active: bool) -> None:
        await self.turns.set_user_active(user_id, active)

    async def is_user_active(self, user_id: str) -> bool:
        return await self.turns.is_user_active(user_id)

    # -- MemoryIndex -----------------------------------------------------------------------

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        return await self.memories.add_memories(memories)

    async def dense_search(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        return await self.memories.dense_search(user_id, vector, k)

    async def lexical_search(self, user_id: str, terms: Sequence[str], k: int) -> list[MemoryHit]:
        return await self.memories.lexical_search(user_id, terms, k)

    async def rare_terms(self, user_id: str, terms: Sequence[str], *, share: float, floor: int) -> list[str]:
        return await self.memories.rare_terms(user_id, terms, share=share, floor=floor)

    async def list_memories(
        self, user_id: str, limit: int, offset: int = 0, *, without_kinds: Sequence[str] = ()
    ) -> list[Memory]:
        return await self.memories.list_memories(user_id, limit, offset, without_kinds=without_kinds)

    async def memory_count(self, user_id: str, *, without_kinds: Sequence[str] = ()) -> int:
        return await self.memories.memory_count(user_id, without_kinds=without_kinds)

    async def forget(self, user_id: str, memory_id: int) -> bool:
        return await self.memories.forget(user_id, memory_id)

    async def forget_all(self, user_id: str) -> int:
        return await self.memories.forget_all(user_id)

    # -- MemoryCuration --------------------------------------------------------------------

    async def get_memories(self, user_id: str, memory_ids: Sequence[int]) -> list[Memory]:
        return await self.curation.get_memories(user_id, memory_ids)

    async def revise_memory(self, user_id: str, memory_id: int, revision: Revision) -> bool:
        return await self.curation.revise_memory(user_id, memory_id, revision)

    async def link_sources(self, memory_id: int, turn_ids: Sequence[int]) -> None:
        await self.curation.link_sources(memory_id, turn_ids)

    async def memory_sources(self, memory_id: int) -> list[int]:
        return await self.curation.memory_sources(memory_id)

    async def people(self, after: str | None, limit: int) -> list[str]:
        return await self.curation.people(after, limit)

    # -- RewardLog -------------------------------------------------------------------------

    async def memory_rewards(self, user_id: str, memory_ids: Sequence[int]) -> dict[int, float]:
        return await self.rewards.memory_rewards(user_id, memory_ids)

    async def reply_record(self, turn_id: int, later_limit: int) -> ReplyRecord | None:
        return await self.rewards.reply_record(turn_id, later_limit)

    async def record_signal(self, turn_id: int, signal: Signal, key: str, at: datetime) -> None:
        await self.rewards.record_signal(turn_id, signal, key, at)

    # -- LearningLog -----------------------------------------------------------------------

    async def rated_replies(self, since: datetime, until: datetime) -> list[RatedReply]:
        return await self.learning.rated_replies(since, until)

    async def set_training_consent(self, user_id: str, consent: bool | None) -> None:
        await self.learning.set_training_consent(user_id, consent)

    async def training_consent(self, user_id: str) -> bool | None:
        return await self.learning.training_consent(user_id)

    async def record_examples(self, run_id: int, examples: Sequence[ExampleSnapshot]) -> None:
        await self.learning.record_examples(run_id, examples)

    async def run_examples(self, run_id: int) -> list[ExampleSnapshot]:
        return await self.learning.run_examples(run_id)

    async def version_rates(self, since: datetime) -> list[VersionRate]:
        return await self.learning.version_rates(since)


