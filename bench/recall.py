"""Recall benchmark: does hybrid search find what a person told Kindred weeks ago, better than dense alone?

Generates long multi-session conversations (bench/recall_data.py), imports each person's turns with
the real all-MiniLM-L6-v2 embedder, then asks every question twice: dense only
(`hybrid_search(..., lexical=False)`) and hybrid (dense + lexical, fused). A question counts as found
at k when all its gold evidence turns are among the top k.

Then curated memory (bench/recall_contradictions.py): other people's turns go in the way the product
stores them, with `remember_turn` (rules only) after each user turn, and questions on the simulated
clock check that contradicted facts stay out of the top 5 and that a months-old event does not
outrank a stable preference on its topic. Prints one JSON object on stdout.

    .venv/bin/python -m bench.recall --quick
    .venv/bin/python -m bench.recall --backend postgres --database-url postgresql://...
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bench import recall_contradictions as curated
from bench.common import exit_cleanly_on_sigterm, log, machine, millis, now_iso, open_store, server_for
from bench.recall_data import FAMILIES, QUICK, Dataset, Question, Shape, generate, overlap_summary
from bot.core.memory_file import ImportItem
from bot.core.memory_ops import import_items
from bot.core.models import Vector
from bot.core.ports import Embedder, Store
from bot.core.recall import hybrid_search
from bot.core.text import query_terms

KS = (5, 10)
# Lexical alone is reported too: it shows what the lexical half brings to the fusion.
MODES = ("dense", "lexical", "hybrid")
# "Clearly better": hybrid must find at least this much more at k=10 than dense alone.
MIN_DELTA_AT_10 = 0.03
EMBED_BATCH = 64
LEXICAL_RANKING = {
    "sqlite": "FTS5 bm25, porter stemmer",
    "postgres": "ts_rank_cd over websearch_to_tsquery('english')",
}


@dataclasses.dataclass(slots=True)
class Outcome:
    question: Question
    mode: str
    found: dict[int, bool]
    rank: int | None  # 1-based rank of the first gold turn within the top max(KS), if there
    top: list[str]  # turn ids of the top max(KS)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--quick", action="store_true", help="a small set: about a minute on 2 cores")
    parser.add_argument("--users", type=int, help="people (default 8, quick 3)")
    parser.add_argument("--sessions", type=int, help="sessions per person (default 40, quick 12)")
    parser.add_argument("--facts", type=int, help=f"facts per person, at most {len(FAMILIES)}")
    parser.add_argument("--repeats", type=int, help="second facts of a kind per person (default 8, quick 4)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--database-url", help="PostgreSQL server (else $BENCH_DATABASE_URL, else embedded)")
    parser.add_argument("--show-misses", type=int, default=0, metavar="N",
                        help="print N questions each mode missed at k=10 to stderr")
    return parser.parse_args(argv)


def shape_from(args: argparse.Namespace) -> Shape:
    base = QUICK if args.quick else Shape()
    changes = {name: getattr(args, name) for name in ("users", "sessions", "facts", "repeats", "seed")}
    return dataclasses.replace(base, **{k: v for k, v in changes.items() if v is not None})


async def load(store: Store, embedder: Embedder, data: Dataset) -> dict[str, int]:
    """Import every person's turns through the memory CLI's path; returns turn id → memory id."""
    memory_of: dict[str, int] = {}
    for user_id in data.users():
        turns = data.turns_of(user_id)
        items = [
            ImportItem(line, turn.text, turn.speaker, turn.at, {"turn_id": turn.turn_id})
            for line, turn in enumerate(turns, start=1)
        ]
        ids = await import_items(store, embedder, user_id, items)
        memory_of.update({turn.turn_id: mid for turn, mid in zip(turns, ids, strict=True)})
        log(f"imported {len(turns)} turns of {user_id}")
    return memory_of


async def ask(
    store: Store, question: Question, vector: Vector, mode: str, turn_of: dict[int, str]
) -> Outcome:
    found: dict[int, bool] = {}
    top: list[str] = []
    for k in KS:
        if mode == "lexical":
            terms = query_terms(question.text)
            ids = [hit.memory.id for hit in await store.lexical_search(question.user_id, terms, k)]
        else:
            hits = await hybrid_search(store, question.user_id, question.text, vector, k,
                                       lexical=mode == "hybrid")
            ids = [hit.memory.id for hit in hits]
        top = [turn_of[mid] for mid in ids]
        found[k] = set(question.gold) <= set(top)
    ranks = [top.index(gold) + 1 for gold in question.gold if gold in top]
    return Outcome(question, mode, found, min(ranks) if ranks else None, top)


def summarise(outcomes: Sequence[Outcome]) -> dict[str, float]:
    summary = {f"recall@{k}": round(sum(o.found[k] for o in outcomes) / len(outcomes), 4) for k in KS}
    summary["mrr@10"] = round(sum(1 / o.rank for o in outcomes if o.rank) / len(outcomes), 4)
    return summary


def compare(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    by_mode = {mode: summarise([o for o in outcomes if o.mode == mode]) for mode in MODES}
    delta = {key: round(by_mode["hybrid"][key] - by_mode["dense"][key], 4) for key in by_mode["dense"]}
    return {**by_mode, "delta": delta, "questions": len(outcomes) // len(MODES)}


def show_misses(data: Dataset, outcomes: Sequence[Outcome], count: int) -> None:
    text = {turn.turn_id: turn.text for turn in data.turns}
    for mode in ("dense", "hybrid"):
        missed = [o for o in outcomes if o.mode == mode and not o.found[max(KS)]][:count]
        for o in missed:
            log(f"[{mode} miss, {o.question.kind}] {o.question.text!r} -> gold {text[o.question.gold[0]]!r}")
            for turn_id in o.top[:3]:
                log(f"      got: {text[turn_id]!r}")


async def evaluate(
    store: Store, embedder: Embedder, data: Dataset, memory_of: dict[str, int]
) -> list[Outcome]:
    turn_of = {mid: turn_id for turn_id, mid in memory_of.items()}
    vectors = await embedder.embed([q.text for q in data.questions])
    outcomes: list[Outcome] = []
    for question, vector in zip(data.questions, vectors, strict=True):
        for mode in MODES:
            outcomes.append(await ask(store, question, vector, mode, turn_of))
    return outcomes


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from bot.inference.embedder import SentenceTransformerEmbedder

    report: dict[str, Any] = {"benchmark": "recall", "date": now_iso(), "machine": machine()}
    started = time.perf_counter()
    shape = shape_from(args)
    data = generate(shape)
    log(f"generated {len(data.turns)} turns and {len(data.questions)} questions")
    embedder = SentenceTransformerEmbedder.load(batch_size=EMBED_BATCH)
    timings: dict[str, float] = {"generate_and_load_model": time.perf_counter() - started}
    try:
        async with server_for([args.backend], args.database_url) as server, \
                open_store(args.backend, server) as opened:
            store, store_facts = opened.store, opened.facts
            began = time.perf_counter()
            memory_of = await load(store, embedder, data)
            timings["import_with_embeddings"] = time.perf_counter() - began
            began = time.perf_counter()
            outcomes = await evaluate(store, embedder, data, memory_of)
            timings["questions"] = time.perf_counter() - began
            began = time.perf_counter()
            conversations = curated.generate(shape.users, shape.sessions, shape.seed)
            log(f"curated memory: {len(conversations.said)} user turns, "
                f"{len(conversations.probes)} questions")
            found = await curated.evaluate(store, embedder, conversations, args.show_misses)
            timings["contradictions_and_aged_events"] = time.perf_counter() - began
    finally:
        await embedder.close()
    if args.show_misses:
        show_misses(data, outcomes, args.show_misses)
    overall = compare(outcomes)
    by_kind: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_kind[outcome.question.kind].append(outcome)
    report |= {
        "backend": args.backend,
        "lexical_ranking": LEXICAL_RANKING[args.backend],
        "store": store_facts,
        "embedding_model": embedder.model_name,
        "dataset": {
            "seed": shape.seed,
            "users": shape.users,
            "sessions_per_user": shape.sessions,
            "sessions": shape.users * shape.sessions,
            "turns": len(data.turns),
            "user_turns": sum(turn.speaker == "user" for turn in data.turns),
            "questions": len(data.questions),
            "questions_by_kind": {kind: len(items) // len(MODES) for kind, items in sorted(by_kind.items())},
            "fact_families": len(FAMILIES),
            "share_of_questions_with_no_content_word_in_common": overlap_summary(data),
        },
        "recall": overall,
        "by_kind": {kind: compare(items) for kind, items in sorted(by_kind.items())},
        "target": {"hybrid_minus_dense_recall@10_at_least": MIN_DELTA_AT_10,
                   "pass": overall["delta"]["recall@10"] >= MIN_DELTA_AT_10},
        "curated": {
            "people": shape.users,
            "user_turns": len(conversations.said),
            "path": "add_turn (rules' kind), reply, remember_turn (rules only); "
                    "upkeep (checks, consolidation) the night after each session and at question time",
            "contradictions": found["contradictions"],
            "aged_events": found["aged_events"],
            "upkeep": found["upkeep"],
            "extraction_per_user_turn": millis(found["extraction_s"]),
        },
        "timings_s": {name: round(value, 1) for name, value in timings.items()},
    }
    return report


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    exit_cleanly_on_sigterm()
    report = asyncio.run(run(args))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
