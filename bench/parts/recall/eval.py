"""Asking a dataset's questions by every method, and scoring the answers the same way for each set.

recall@k is the share of a question's evidence turns found in its top k, averaged over questions;
all_found@k is the share of questions whose evidence is all in the top k; mrr@10 rewards the first
evidence turn's rank. A method is a function from a question to memory ids, best first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.core.memory.ports import Embedder
from bot.core.memory.recall import hybrid_search
from bot.core.models import Vector
from bot.core.store import Store
from bot.core.text import query_terms

K = 10
KS = (5, 10)


@dataclass(frozen=True, slots=True)
class Case:
    """One question asked of one person's memories: `gold` are the memory ids that answer it."""

    user_id: str
    text: str
    gold: frozenset[int]
    group: str  # a kind or category, for the breakdown


Method = Callable[[Store, Case, Vector], Awaitable[list[int]]]


async def dense(store: Store, case: Case, vector: Vector) -> list[int]:
    """Kindred's search with the lexical half off: dense, weighed by reward, age and speaker."""
    hits = await hybrid_search(store, case.user_id, case.text, vector, K, lexical=False)
    return [hit.memory.id for hit in hits]


async def lexical(store: Store, case: Case, vector: Vector) -> list[int]:
    """The store's full-text search alone over all the question's content words."""
    hits = await store.memories.lexical_search(case.user_id, query_terms(case.text), K)
    return [hit.memory.id for hit in hits]


async def hybrid(store: Store, case: Case, vector: Vector) -> list[int]:
    """What a reply's prompt gets: hybrid_search as shipped."""
    hits = await hybrid_search(store, case.user_id, case.text, vector, K)
    return [hit.memory.id for hit in hits]


async def hybrid_rrf(store: Store, case: Case, vector: Vector) -> list[int]:
    """hybrid_search with reciprocal-rank fusion instead of score fusion: the comparison."""
    hits = await hybrid_search(store, case.user_id, case.text, vector, K, fusion="rrf")
    return [hit.memory.id for hit in hits]


async def hybrid_without_speaker(store: Store, case: Case, vector: Vector) -> list[int]:
    """hybrid_search as shipped but for the speaker rule (core/memory/lifts.py): what that rule adds."""
    hits = await hybrid_search(store, case.user_id, case.text, vector, K, speaker_weight=0.0)
    return [hit.memory.id for hit in hits]


METHODS: Mapping[str, Method] = {
    "dense": dense,
    "lexical": lexical,
    "hybrid": hybrid,
    "hybrid_rrf": hybrid_rrf,
    "hybrid_without_speaker": hybrid_without_speaker,
}


@dataclass(frozen=True, slots=True)
class Answer:
    case: Case
    method: str
    top: list[int]

    def share(self, k: int) -> float:
        return len(self.case.gold & set(self.top[:k])) / len(self.case.gold)

    def rank(self) -> int | None:
        ranks = [rank for rank, mid in enumerate(self.top[:K], start=1) if mid in self.case.gold]
        return ranks[0] if ranks else None


async def ask_all(
    store: Store, embedder: Embedder, cases: Sequence[Case], methods: Mapping[str, Method]
) -> list[Answer]:
    """Every case by every method; each question is embedded once."""
    vectors = await embedder.embed([case.text for case in cases])
    answers: list[Answer] = []
    for case, vector in zip(cases, vectors, strict=True):
        for name, method in methods.items():
            answers.append(Answer(case, name, await method(store, case, vector)))
    return answers


def summarise(answers: Sequence[Answer]) -> dict[str, float | int]:
    n = len(answers)
    if n == 0:
        return {"recall_at_10": 0.0, "n": 0}
    summary: dict[str, float | int] = {
        f"recall_at_{k}": round(sum(a.share(k) for a in answers) / n, 4) for k in sorted(KS, reverse=True)
    }
    summary["all_found_at_10"] = round(sum(a.share(K) == 1.0 for a in answers) / n, 4)
    summary["mrr_at_10"] = round(sum(1 / r for a in answers if (r := a.rank())) / n, 4)
    summary["n"] = n
    return summary


def by_method(answers: Sequence[Answer]) -> dict[str, dict[str, float | int]]:
    grouped: dict[str, list[Answer]] = defaultdict(list)
    for answer in answers:
        grouped[answer.method].append(answer)
    return {name: summarise(items) for name, items in grouped.items()}


def by_group(answers: Sequence[Answer]) -> dict[str, dict[str, dict[str, float | int]]]:
    grouped: dict[str, list[Answer]] = defaultdict(list)
    for answer in answers:
        grouped[answer.case.group].append(answer)
    return {group: by_method(items) for group, items in sorted(grouped.items())}
