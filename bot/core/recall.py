"""Choosing which memories go into a prompt: hybrid search, fused, then fitted to a budget."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.models import Memory, MemoryHit, Vector
from bot.core.ports import MemoryIndex, RecallIndex, RewardLog
from bot.core.scoring import SHIPPED, Scoring, Why, explain, score
from bot.core.text import query_terms

# Reciprocal-rank fusion constant: 60 is the value from Cormack et al. and works unchanged for
# mixing cosine similarities with BM25 scores, whose scales have nothing in common.
RRF_K = 60
# Each search fetches more than k so that fusion has something to agree on.
OVERFETCH = 4
# Only the lexical list's head joins the fusion. Its first hits are sharp (a name, a number, a
# rare word the person used); its tail matches common words and, fused rank for rank, pushes
# better dense results out. Measured with bench/recall.py: depth 3 keeps nearly all the keyed
# gains of the full list and loses a third as much on paraphrased questions.
LEXICAL_DEPTH = 3
# Only words that few of a person's memories contain go to lexical search ("Mateo", "lisinopril",
# "4471"). Common words ("rest", "show", "going") match chatter and only crowd dense results out;
# meaning is dense search's job. Measured with bench/recall.py.
RARE_SHARE = 0.005
RARE_FLOOR = 3
MAX_MEMORY_CHARS = 400


@dataclass(frozen=True, slots=True)
class Recalled:
    memory: Memory
    score: float
    # The parts of `score` (core/scoring.py); None when only relevance ranked it.
    why: Why | None = None

    @property
    def favoured(self) -> bool:
        return self.why is not None and self.why.favoured


def fuse(ranked_lists: Sequence[Sequence[MemoryHit]], k: int) -> list[Recalled]:
    """Reciprocal-rank fusion of several best-first lists, best first."""
    scores: dict[int, float] = {}
    memories: dict[int, Memory] = {}
    for hits in ranked_lists:
        for rank, hit in enumerate(hits):
            scores[hit.memory.id] = scores.get(hit.memory.id, 0.0) + 1.0 / (RRF_K + rank + 1)
            memories[hit.memory.id] = hit.memory
    # Equal scores: the newer memory first.
    order = sorted(scores, key=lambda mid: (-scores[mid], -mid))
    return [Recalled(memories[mid], scores[mid]) for mid in order[:k]]


async def hybrid_search(
    index: RecallIndex,
    user_id: str,
    query: str,
    vector: Vector,
    k: int,
    *,
    exclude: Collection[int] = (),
    only_chat: str | None = None,
    lexical: bool = True,
    rare_floor: int = RARE_FLOOR,
    scoring: Scoring | None = SHIPPED,
    now: datetime | None = None,
) -> list[Recalled]:
    """Dense plus lexical search over one user's memories, fused, then weighed by reward, age and
    verification as of `now` (default: the present). `only_chat`: only memories from that chat
    (`meta.chat_id`). `lexical=False`: dense only; `rare_floor`: a word in at most this many of the
    person's memories always counts as rare; `scoring=None`: relevance alone. Each result
    says why it was chosen (`Recalled.why`)."""
    if k <= 0:
        return []
    fetch = (k + len(exclude)) * OVERFETCH
    if only_chat is not None:
        fetch *= OVERFETCH  # one chat's memories are a slice of the person's: look further for k

    def wanted(hit: MemoryHit) -> bool:
        return hit.memory.id not in exclude and (
            only_chat is None or hit.memory.meta.get("chat_id") == only_chat
        )

    # Dense search needs nothing from the lexical side, so the two run side by side.
    dense, words = await asyncio.gather(
        index.dense_search(user_id, vector, fetch),
        _rare_word_search(index, user_id, query, fetch, rare_floor) if lexical else _nothing(),
    )
    dense = [hit for hit in dense if wanted(hit)]
    words = [hit for hit in words if wanted(hit)][:LEXICAL_DEPTH]
    if scoring is None:
        return fuse([dense, words], k)
    # Every candidate is weighed, so reward and age can bring in one that relevance ranked past k.
    fused = fuse([dense, words], len(dense) + len(words))
    return (await weigh(index, user_id, fused, scoring, now or datetime.now(UTC)))[:k]


async def weigh(
    rewards: RewardLog, user_id: str, fused: Sequence[Recalled], scoring: Scoring, now: datetime
) -> list[Recalled]:
    """Fused results scored by relevance, reward, decay and verification, best first."""
    if not fused:
        return []
    credit = await rewards.memory_rewards(user_id, [item.memory.id for item in fused])
    weighed = []
    for item in fused:
        why = explain(item.memory, item.score, credit.get(item.memory.id, 0.0), now, scoring)
        weighed.append(Recalled(item.memory, score(why, scoring), why))
    # Equal scores: a favoured memory first, then the newer one.
    weighed.sort(key=lambda r: (-r.score, not r.favoured, -r.memory.id))
    return weighed


async def _rare_word_search(
    index: MemoryIndex, user_id: str, query: str, fetch: int, floor: int
) -> list[MemoryHit]:
    terms = query_terms(query)
    if terms:
        terms = await index.rare_terms(user_id, terms, share=RARE_SHARE, floor=floor)
    return await index.lexical_search(user_id, terms, fetch) if terms else []


async def _nothing() -> list[MemoryHit]:
    return []


def memory_line(memory: Memory) -> str:
    text = memory.text if len(memory.text) <= MAX_MEMORY_CHARS else memory.text[:MAX_MEMORY_CHARS] + "…"
    who = {"user": "they said", "assistant": "you said"}.get(memory.speaker or "", "noted")
    if memory.status == "past":
        who += " (this has passed)"
    return f"- {memory.created_at:%Y-%m-%d}, {who}: {text}"


def fit_budget(
    recalled: Sequence[Recalled], budget_tokens: int, count_tokens: Callable[[str], int]
) -> list[Recalled]:
    """The best memories whose lines fit in `budget_tokens`, in the order given. Favoured memories
    (reward above the threshold) get room first, so a tight budget drops an unrated one instead."""
    costs = [count_tokens(memory_line(item.memory)) + 1 for item in recalled]
    kept: set[int] = set()
    used = 0
    for favoured_pass in (True, False):
        for index, item in enumerate(recalled):
            if item.favoured != favoured_pass or used + costs[index] > budget_tokens:
                continue
            kept.add(index)
            used += costs[index]
    return [item for index, item in enumerate(recalled) if index in kept]
