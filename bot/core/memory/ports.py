"""The memory room's boundaries: the memory index and its revisions, and the embedder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.core.learning.ports import RewardLog
from bot.core.models import (
    Memory,
    MemoryHit,
    NewMemory,
    Revision,
    Vector,
)


class MemoryIndex(Protocol):
    """Recallable memories of each person, searched per user only."""

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        """Store memories in one transaction; ids come back in input order."""
        ...

    async def dense_search(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Nearest memories by cosine similarity (score = similarity). Full k when the user has k."""
        ...

    async def lexical_search(self, user_id: str, terms: Sequence[str], k: int) -> list[MemoryHit]:
        """Memories that share any of `terms`, best first. Terms are plain lowercase words."""
        ...

    async def rare_terms(self, user_id: str, terms: Sequence[str], *, share: float, floor: int) -> list[str]:
        """The terms found in at least one and at most max(floor, share × their memory count) of
        this user's memories, in input order: the words that can single a memory out."""
        ...

    async def list_memories(
        self, user_id: str, limit: int, offset: int = 0, *, without_kinds: Sequence[str] = ()
    ) -> list[Memory]:
        """One person's memories, oldest first, leaving out those of `without_kinds` (the offset
        counts only the memories listed)."""
        ...

    async def memory_count(
        self, user_id: str, *, without_kinds: Sequence[str] = (), only_kinds: Sequence[str] = ()
    ) -> int:
        """How many memories this person has, leaving out those of `without_kinds` and, when
        `only_kinds` names any, counting only those (0 for someone unknown)."""
        ...

    async def forget(self, user_id: str, memory_id: int) -> bool:
        """Delete one memory of this user. False when there was none: not an error.

        Every stored prompt (`Generation`) that used the memory or quotes its text is deleted with
        it, so no later training dataset holds it; the replies themselves stay in the history."""
        ...

    async def forget_all(self, user_id: str) -> int:
        """Delete every memory, turn, reaction, stored prompt and training snapshot of this user.
        Returns how many memories went."""
        ...


class MemoryCuration(Protocol):
    """What extraction, contradiction, checks and consolidation change about memories.

    Search (`MemoryIndex.dense_search`, `lexical_search`, `rare_terms`) sees only recallable
    memories (status active or past); listing, counting and export see every one.
    """

    async def get_memories(self, user_id: str, memory_ids: Sequence[int]) -> list[Memory]:
        """This user's memories among `memory_ids`, in id order; others' and missing ids are skipped."""
        ...

    async def revise_memory(self, user_id: str, memory_id: int, revision: Revision) -> bool:
        """Apply one revision (a new text is re-indexed for both searches). False: no such memory."""
        ...

    async def link_sources(self, memory_id: int, turn_ids: Sequence[int]) -> None:
        """Record the turns a memory came from. Linking a pair again is a no-op."""
        ...

    async def memory_sources(self, memory_id: int) -> list[int]:
        """The turns a memory came from, ascending: its own turn, and every linked one."""
        ...

    async def people(self, after: str | None, limit: int) -> list[str]:
        """User ids that have memories, ascending, after `after`: for jobs that visit everyone."""
        ...


class RecallIndex(Protocol):
    """What recall reads of a store: the memories, and the reward they earned."""

    @property
    def memories(self) -> MemoryIndex: ...

    @property
    def rewards(self) -> RewardLog: ...


class Embedder(Protocol):
    model_name: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Unit-length vectors, one per text, computed off the event loop."""
        ...
