"""Consolidation: old sessions of raw turns become one summary memory each.

A periodic job (`kindred.memory.upkeep`) runs `consolidate` for every person:
- Raw turns older than `older_than` are grouped by chat and into sessions (a pause longer than
  `session_gap` ends one). A session of at least `min_turns` gets a summary memory (kind
  `summary`): the person's most informative sentences, in order, within `summary_chars`. It links
  to every turn it covers, and those turns' weight drops to `covered_weight`, so the summary
  answers first and the raw turns stay recallable behind it.
- Over `budget` recallable memories, covered raw turns are archived, oldest first, until the
  person is within budget: kept and exported, never recalled.
- Never touched: statements (preferences, facts, events) and pinned memories ("remember that …").
  Raw turns that earned positive reward are covered like the rest but never archived.

The summary is extractive on purpose: it uses only the person's own words, so a small model
cannot put something in it they never said.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from bot.core import memory_ops
from bot.core.extraction import sentences
from bot.core.models import Memory, NewMemory, Revision
from bot.core.ports import Embedder, MemoryCuration, MemoryIndex, RewardLog
from bot.core.text import EMBED_CHARS, query_terms

RAW_KINDS = frozenset({"turn", "imported"})


class ConsolidationStore(MemoryIndex, MemoryCuration, RewardLog, Protocol):
    """What consolidation needs of the store."""


@dataclass(frozen=True, slots=True)
class ConsolidationPolicy:
    older_than: timedelta = timedelta(days=14)
    session_gap: timedelta = timedelta(minutes=30)
    min_turns: int = 3
    summary_chars: int = 480
    covered_weight: float = 0.5
    budget: int = 5000  # recallable memories per person


@dataclass(frozen=True, slots=True)
class Consolidated:
    summaries: int
    covered: int
    archived: int

    def as_payload(self) -> dict[str, int]:
        return {"summaries": self.summaries, "covered": self.covered, "archived": self.archived}


async def consolidate(
    store: ConsolidationStore,
    embedder: Embedder,
    user_id: str,
    now: datetime,
    policy: ConsolidationPolicy | None = None,
) -> Consolidated:
    """Summarise this person's old sessions, then keep them within budget."""
    policy = policy or ConsolidationPolicy()
    cutoff = now - policy.older_than
    # Read once, by id, not by time: covered turns are skipped here, so a long history never makes
    # a run re-read the same oldest page night after night.
    everything = [m async for m in memory_ops.all_memories(store, user_id)]
    raw = [
        m for m in everything
        if m.recallable and m.kind in RAW_KINDS and m.weight >= 1.0 and not m.pinned
        and m.created_at < cutoff
    ]  # fmt: skip
    summaries = 0
    covered: set[int] = set()
    for session in sessions(raw, policy.session_gap):
        if len(session) < policy.min_turns:
            continue
        await _summarise(store, embedder, session, policy)
        summaries += 1
        covered.update(m.id for m in session)
    recallable = sum(1 for m in everything if m.recallable) + summaries
    archivable = [
        m for m in everything
        if m.recallable and m.kind in RAW_KINDS and not m.pinned and (m.weight < 1.0 or m.id in covered)
    ]  # fmt: skip
    archived = await _archive_over_budget(store, user_id, archivable, recallable - policy.budget, now)
    return Consolidated(summaries, len(covered), archived)


def sessions(memories: Sequence[Memory], gap: timedelta) -> list[list[Memory]]:
    """Memories grouped by chat, then split where a pause is longer than `gap`; oldest first."""
    by_chat: dict[str, list[Memory]] = {}
    for memory in sorted(memories, key=lambda m: (m.created_at, m.id)):
        by_chat.setdefault(str(memory.meta.get("chat_id", "")), []).append(memory)
    found: list[list[Memory]] = []
    for chat in by_chat.values():
        current: list[Memory] = []
        for memory in chat:
            if current and memory.created_at - current[-1].created_at > gap:
                found.append(current)
                current = []
            current.append(memory)
        if current:
            found.append(current)
    return sorted(found, key=lambda s: s[0].created_at)


def summary_text(session: Sequence[Memory], limit: int) -> str:
    """The session's date and the person's most informative sentences, in the order said."""
    said: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for memory in session:
        if memory.speaker == "assistant":
            continue
        for sentence in sentences(memory.text):
            key = sentence.lower()
            if key not in seen:
                seen.add(key)
                said.append((len(query_terms(sentence)), len(said), sentence))
    head = f"{session[0].created_at:%Y-%m-%d}: "
    chosen: list[tuple[int, str]] = []
    used = len(head)
    for words, order, sentence in sorted(said, key=lambda item: (-item[0], item[1])):
        if words and used + len(sentence) + 2 <= limit:
            chosen.append((order, sentence))
            used += len(sentence) + 2
    if not chosen and said:
        chosen = [(0, said[0][2][: limit - len(head) - 1] + "…")]
    return head + " / ".join(sentence for _, sentence in sorted(chosen))


async def _summarise(
    store: ConsolidationStore, embedder: Embedder, session: Sequence[Memory], policy: ConsolidationPolicy
) -> int:
    first, last = session[0], session[-1]
    text = summary_text(session, policy.summary_chars)
    vector = (await embedder.embed([text[:EMBED_CHARS]]))[0]
    meta = {
        "chat_id": first.meta.get("chat_id"),
        "covers": [m.id for m in session],
        "session_start": first.created_at.isoformat(),
        "session_end": last.created_at.isoformat(),
    }
    summary = NewMemory(
        first.user_id, text, None, last.created_at, vector, embedder.model_name, "summary", meta
    )
    (summary_id,) = await store.add_memories([summary])
    turns = [m.source_turn_id for m in session if m.source_turn_id is not None]
    await store.link_sources(summary_id, turns)
    for memory in session:
        await store.revise_memory(memory.user_id, memory.id, Revision(weight=policy.covered_weight))
    return summary_id


async def _archive_over_budget(
    store: ConsolidationStore, user_id: str, covered: Sequence[Memory], over: int, now: datetime
) -> int:
    """Archive up to `over` covered raw turns, oldest first, skipping those that earned reward."""
    if over <= 0:
        return 0
    credit = await store.memory_rewards(user_id, [m.id for m in covered])
    archived = 0
    for memory in sorted(covered, key=lambda m: (m.created_at, m.id)):
        if archived >= over:
            break
        if credit.get(memory.id, 0.0) > 0:
            continue
        if await store.revise_memory(user_id, memory.id, Revision(status="archived", updated_at=now)):
            archived += 1
    return archived
