"""Consolidation: old sessions of raw turns become one summary memory each.

A periodic job (`kindred.memory.upkeep`) runs `consolidate` for every person:
- Raw turns older than `older_than` are grouped by chat and into sessions (a pause longer than
  `session_gap` ends one). A session of at least `min_turns` whose person said something (at least
  `min_words` content words, so "ok" / "Sure." is left alone) gets a summary memory (kind
  `summary`): the person's most informative sentences, in order, within `summary_chars`. It links
  to every turn it covers (each records it in `meta.covered_by`). One exchange is a session too.
- Once the summary exists, the covered turns it says in full are archived: the bot's replies (the
  person's words are the evidence, and the summary holds them), and the person's turn that is the
  whole summary (a one-exchange session). The person's other covered turns stay recallable, at
  `covered_weight`, beside the summary.
- Over `budget` recallable memories, covered raw turns are archived, oldest first, until the
  person is within budget: kept and exported, never recalled. Passages of shared files have a
  limit of their own (core/media/documents.py) and do not count here: a long PDF never pushes
  what the person said out of recall.
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

from bot.core.learning.ports import RewardLog
from bot.core.memory import operations
from bot.core.memory.extraction import sentences
from bot.core.memory.ports import Embedder, MemoryCuration, MemoryIndex
from bot.core.models import DOCUMENT, Memory, NewMemory, Revision
from bot.core.text import EMBED_CHARS, query_terms

RAW_KINDS = frozenset({"turn", "imported"})
SEPARATOR = " / "


class ConsolidationStore(Protocol):
    """What consolidation needs of the store."""

    @property
    def memories(self) -> MemoryIndex: ...

    @property
    def curation(self) -> MemoryCuration: ...

    @property
    def rewards(self) -> RewardLog: ...


@dataclass(frozen=True, slots=True)
class ConsolidationPolicy:
    older_than: timedelta = timedelta(days=14)
    session_gap: timedelta = timedelta(minutes=30)
    min_turns: int = 1
    min_words: int = 3  # content words the person said in the session
    summary_chars: int = 480
    # Measured on bench/recall.py's generated set (bench/consolidation_recall.py): covered turns
    # at half weight cost recall@10 (0.96 → 0.947), so they keep their weight behind the summary.
    covered_weight: float = 1.0
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
    everything = [m async for m in operations.all_memories(store.memories, user_id)]
    raw = [
        m for m in everything
        if m.recallable and m.kind in RAW_KINDS and not _covered(m) and not m.pinned
        and m.created_at < cutoff
    ]  # fmt: skip
    summaries = 0
    covered: set[int] = set()
    said_in_full: list[Memory] = []
    for session in sessions(raw, policy.session_gap):
        if len(session) < policy.min_turns or _words_said(session) < policy.min_words:
            continue
        said_in_full += await _summarise(store, embedder, session, policy)
        summaries += 1
        covered.update(m.id for m in session)
    archived = await _archive(store, user_id, said_in_full, len(said_in_full), now)
    recallable = sum(1 for m in everything if m.recallable and m.kind != DOCUMENT) + summaries - archived
    gone = {m.id for m in said_in_full}
    archivable = [
        m for m in everything
        if m.recallable and m.kind in RAW_KINDS and not m.pinned and m.id not in gone
        and (_covered(m) or m.id in covered)
    ]  # fmt: skip
    archived += await _archive(store, user_id, archivable, recallable - policy.budget, now)
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
    return summary_from(*_summary_choice(session, limit))


def _summary_choice(session: Sequence[Memory], limit: int) -> tuple[str, list[str]]:
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
        if words and used + len(sentence) + len(SEPARATOR) <= limit:
            chosen.append((order, sentence))
            used += len(sentence) + len(SEPARATOR)
    if not chosen and said:
        chosen = [(0, said[0][2][: limit - len(head) - 1] + "…")]
    return head, [sentence for _, sentence in sorted(chosen)]


def summary_from(head: str, said: Sequence[str]) -> str:
    """A summary's text from its date head ("2026-02-02: ") and its sentences."""
    return head + SEPARATOR.join(said)


def summary_parts(text: str) -> tuple[str, list[str]]:
    """The date head and the sentences of a summary's text (`summary_from`'s inverse)."""
    head, colon, rest = text.partition(": ")
    if not colon or len(head) != len("2026-02-02"):
        return "", text.split(SEPARATOR)
    return head + colon, rest.split(SEPARATOR)


def _covered(memory: Memory) -> bool:
    # Covered turns carry their summary's id; those covered before it was recorded weigh less.
    return "covered_by" in memory.meta or memory.weight < 1.0


def _words_said(session: Sequence[Memory]) -> int:
    return sum(len(query_terms(m.text)) for m in session if m.speaker != "assistant")


def _said_in_full(memory: Memory, chosen: set[str]) -> bool:
    """The bot's reply (the summary keeps only the person's words), or the person's turn that is
    the whole summary: each says the other's sentences, as in a one-exchange session. A turn that is
    one of several in its summary stays: measured on bench/recall.py's generated set, archiving
    those costs recall (a long summary is found less surely than the turn that said the fact)."""
    if memory.speaker == "assistant":
        return True
    said = {sentence.lower() for sentence in sentences(memory.text)}
    return bool(said) and said == chosen


async def _summarise(
    store: ConsolidationStore, embedder: Embedder, session: Sequence[Memory], policy: ConsolidationPolicy
) -> list[Memory]:
    """Store the session's summary; the turns it says in full, which may now be archived."""
    first, last = session[0], session[-1]
    head, chosen = _summary_choice(session, policy.summary_chars)
    text = summary_from(head, chosen)
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
    (summary_id,) = await store.memories.add_memories([summary])
    turns = [m.source_turn_id for m in session if m.source_turn_id is not None]
    await store.curation.link_sources(summary_id, turns)
    for memory in session:
        revision = Revision(weight=policy.covered_weight, meta={**memory.meta, "covered_by": summary_id})
        await store.curation.revise_memory(memory.user_id, memory.id, revision)
    held = {sentence.lower() for sentence in chosen}
    return [memory for memory in session if _said_in_full(memory, held)]


async def _archive(
    store: ConsolidationStore, user_id: str, covered: Sequence[Memory], over: int, now: datetime
) -> int:
    """Archive up to `over` covered raw turns, oldest first, skipping those that earned reward."""
    if over <= 0:
        return 0
    credit = await store.rewards.memory_rewards(user_id, [m.id for m in covered])
    archived = 0
    for memory in sorted(covered, key=lambda m: (m.created_at, m.id)):
        if archived >= over:
            break
        if credit.get(memory.id, 0.0) > 0:
            continue
        if await store.curation.revise_memory(
            user_id, memory.id, Revision(status="archived", updated_at=now)
        ):
            archived += 1
    return archived
