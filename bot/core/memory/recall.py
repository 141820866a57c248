"""Choosing which memories go into a prompt: hybrid search, fused, then fitted to a budget."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from bot.core.chat import quote
from bot.core.learning.ports import RewardLog
from bot.core.memory.lifts import Lift, lift_for
from bot.core.memory.ports import MemoryIndex, RecallIndex
from bot.core.memory.scoring import SHIPPED, Scoring, Why, explain, score
from bot.core.models import DOCUMENT, IMAGE, Memory, MemoryHit, Vector
from bot.core.text import query_terms

# Reciprocal-rank fusion constant (Cormack et al.). RRF is kept for comparison (`fusion="rrf"`):
# on real dialogue (bench/recall.py, LoCoMo dev) score fusion finds more, see docs/benchmarks.md.
RRF_K = 60
# Each search fetches more than k so that fusion has something to agree on.
OVERFETCH = 4
# Score fusion: each list's scores are z-normalised over its own candidates (cosines and BM25 have
# nothing in common in scale), then summed, lexical weighed by this. A clear winner in either list
# stays a clear winner, which ranks alone cannot say. Only a better-than-average word match lifts a
# memory; a weak one or none leaves it where dense search put it, so a question that shares no word
# with its answer is not pulled towards memories that share a common one. Chosen on LoCoMo's dev
# half alone in a store: weights 1.5, 2.0 and 3.0 found 0.660, 0.668 and 0.668 of the evidence at
# k=10. Beside the generated set (BM25's word statistics are the whole store's), 1.0 and 1.5 found
# 0.626 and 0.640, and letting weak matches pull down as well 0.637 and 0.639. On the generated set
# the rule took hybrid from 0.876 to 0.886 at weights 0.75 to 1.5 (docs/benchmarks.md, "Recall").
LEXICAL_WEIGHT = 2.0
# The fused sum is squashed into (0, 1) as logistic(sum / RELEVANCE_SCALE): gentle enough that reward
# and decay (core/memory/scoring.py) still reorder memories of about equal relevance, as they did with RRF.
RELEVANCE_SCALE = 8.0
# A question that names a period ("in July 2023") adds this to the fused sum of each candidate from
# that time (core/memory/when.py). On LoCoMo's dev half weights 0.5, 1, 2, 3 and 5 found 0.672, 0.676,
# 0.682, 0.689 and 0.694 of the evidence at k=10, against 0.668 without; counting a memory told of
# up to 14 or 31 days after the period as from it did no better. 3 and not 5, which gained 0.4 more:
# the date should favour, not filter, so that a memory from another time that clearly answers (a
# misread period, a thing told of long after) can still come in.
DATE_WEIGHT = 3.0
# A question that names a speaker of the memories ("what did Melanie paint?") adds this to the
# fused sum of each candidate that speaker said (core/memory/lifts.py). On LoCoMo's dev half alone in a
# store, weights 1, 1.5, 2 and 3 found 0.703, 0.709, 0.710 and 0.709 of the evidence at k=10,
# against 0.693 without; lifting only when the question names one speaker, not both, found the same
# as 2. Chats with Kindred have roles, not names, so the generated and curated sets cannot move.
SPEAKER_WEIGHT = 2.0
# The smallest spread a list's z-scores divide by, in the list's own units (cosine for dense). In a
# small memory set two nearly equal cosines (0.41 and 0.39) would otherwise become z = +1 and -1,
# a clear winner that reward and age could never reorder; in a large one the spread is far wider
# and this changes nothing.
MIN_DENSE_SPREAD = 0.05
Fusion = Literal["score", "rrf"]
MAX_MEMORY_CHARS = 400
# Where a prompt's memory block starts and ends (core/chat/prompt.py); broken inside a memory's text.
MEMORY_DELIMITERS = ("<memories>", "</memories>")


@dataclass(frozen=True, slots=True)
class Recalled:
    memory: Memory
    score: float
    # The parts of `score` (core/memory/scoring.py); None when only relevance ranked it.
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


def fuse_scores(
    dense: Sequence[MemoryHit],
    words: Sequence[MemoryHit],
    k: int,
    lexical_weight: float = LEXICAL_WEIGHT,
    lift: Lift | None = None,
) -> list[Recalled]:
    """Calibrated score fusion, best first: z(dense) + lexical_weight · max(0, z(lexical)), where a
    memory missing from the dense list takes its lowest z (at most 0) and one missing from the
    lexical list adds nothing; `lift` adds its own amount to a memory's sum. The relevance is the
    sum's logistic (see RELEVANCE_SCALE), so it stays positive: scoring multiplies it."""
    dense_z, words_z = _z_scores(dense, MIN_DENSE_SPREAD), _z_scores(words)
    dense_floor = min([0.0, *dense_z.values()])
    memories = {hit.memory.id: hit.memory for hit in (*words, *dense)}
    scores = {
        mid: dense_z.get(mid, dense_floor) + lexical_weight * max(0.0, words_z.get(mid, 0.0))
        for mid in memories
    }
    if lift is not None:
        scores = {mid: value + lift(memories[mid]) for mid, value in scores.items()}
    # Equal scores: the newer memory first.
    order = sorted(scores, key=lambda mid: (-scores[mid], -mid))
    return [Recalled(memories[mid], _squash(scores[mid])) for mid in order[:k]]


def _squash(fused: float) -> float:
    return 1.0 / (1.0 + math.exp(-fused / RELEVANCE_SCALE))


def _z_scores(hits: Sequence[MemoryHit], min_spread: float = 0.0) -> dict[int, float]:
    if not hits:
        return {}
    values = [hit.score for hit in hits]
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if len(values) > 1:
        spread = max(spread, min_spread)
    # One hit, or all equal: each is as good as the list's best, which z = 1 says.
    if spread == 0.0:
        return {hit.memory.id: 1.0 for hit in hits}
    return {hit.memory.id: (hit.score - mean) / spread for hit in hits}


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
    fusion: Fusion = "score",
    lexical_weight: float = LEXICAL_WEIGHT,
    date_weight: float = DATE_WEIGHT,
    speaker_weight: float = SPEAKER_WEIGHT,
    scoring: Scoring | None = SHIPPED,
    now: datetime | None = None,
) -> list[Recalled]:
    """Dense plus lexical search over one user's memories, fused, then weighed by reward, age and
    verification as of `now` (default: the present). `only_chat`: only memories from that chat
    (`meta.chat_id`). Lexical search is BM25 over all the query's content words. `lexical=False`:
    dense only; `fusion`: calibrated scores (default) or reciprocal ranks; `date_weight`: what a
    memory from a calendar period the query names gains in score fusion (0: nothing);
    `speaker_weight`: what a memory said by a speaker the query names gains; `scoring=None`:
    relevance alone. Each result says why it was chosen (`Recalled.why`)."""
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
        index.memories.dense_search(user_id, vector, fetch),
        _word_search(index.memories, user_id, query, fetch) if lexical else _nothing(),
    )
    dense = [hit for hit in dense if wanted(hit)]
    words = [hit for hit in words if wanted(hit)]

    lift = lift_for(query, [hit.memory for hit in (*dense, *words)], date_weight, speaker_weight)

    def fused_top(count: int) -> list[Recalled]:
        if fusion == "rrf":
            return fuse([dense, words], count)
        return fuse_scores(dense, words, count, lexical_weight, lift)

    if scoring is None:
        return fused_top(k)
    # Every candidate is weighed, so reward and age can bring in one that relevance ranked past k.
    fused = fused_top(len(dense) + len(words))
    return (await weigh(index.rewards, user_id, fused, scoring, now or datetime.now(UTC)))[:k]


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


async def _word_search(index: MemoryIndex, user_id: str, query: str, fetch: int) -> list[MemoryHit]:
    terms = query_terms(query)
    return await index.lexical_search(user_id, terms, fetch) if terms else []


async def _nothing() -> list[MemoryHit]:
    return []


def memory_line(memory: Memory) -> str:
    text = memory.text if len(memory.text) <= MAX_MEMORY_CHARS else memory.text[:MAX_MEMORY_CHARS] + "…"
    who = {"user": "they said", "assistant": "you said"}.get(memory.speaker or "", "noted")
    if memory.kind == DOCUMENT:
        # The file's name is the sender's to choose: quoted like the text, it cannot end the line.
        who = document_source(memory, "their", lambda name: quote(name, MEMORY_DELIMITERS))
    elif memory.kind == IMAGE:
        who = "a photo they sent, as you saw it"
    if memory.status == "past":
        who += " (this has passed)"
    # Quoted: a memory's newline, quote mark or marker cannot start a line or leave the block.
    return f"- {memory.created_at:%Y-%m-%d}, {who}: {quote(text, MEMORY_DELIMITERS)}"


def document_source(memory: Memory, whose: str, shown: Callable[[str], str] = str) -> str:
    """Where a document passage comes from, as `from their file "plan.pdf", page 3`: `whose` file,
    its name as `shown` writes it, and the page where the file has pages."""
    name, page = memory.meta.get("file"), memory.meta.get("page")
    source = f"from {whose} file {shown(name)}" if isinstance(name, str) and name else f"from {whose} file"
    return source + (f", page {page}" if isinstance(page, int) and not isinstance(page, bool) else "")


def distinct(recalled: Sequence[Recalled]) -> list[Recalled]:
    """One line per thing said, in the order given: a person who said the same words several times
    (the same greeting each night, a line sent twice) is recalled once, so the block is not filled
    with copies. Of copies, a favoured one wins its place; else the first (the best ranked)."""
    first: dict[tuple[str | None, str], int] = {}
    kept: list[Recalled] = []
    for item in recalled:
        key = (item.memory.speaker, " ".join(item.memory.text.casefold().split()))
        at = first.get(key)
        if at is None:
            first[key] = len(kept)
            kept.append(item)
        elif item.favoured and not kept[at].favoured:
            kept[at] = item
    return kept


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
