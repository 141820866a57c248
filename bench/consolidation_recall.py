"""Consolidation's effect on recall and on rows: the generated set (bench/parts/recall/data.py), asked
before and after the nightly consolidation with the shipped policy.

Each person's turns are imported as `kindred memory import` does, every question is asked (dense
and hybrid, top 10), then `consolidate` runs for everyone as the nightly upkeep would, and every
question is asked again. After consolidation a summary can answer for the turns it covers:
- `covers`: a summary in the top k counts as a hit for every turn it covers (the issue's measure);
- `says`: only for a covered turn whose words it holds in full (stricter: the fact is still there).
A question is found at k when all its gold turns are hit. Prints one JSON object on stdout.

    .venv/bin/python -m bench.consolidation_recall --quick
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from bench import recall
from bench.parts.common import exit_cleanly_on_sigterm, log, machine, now_iso, open_store, server_for
from bench.parts.recall.data import QUICK, Dataset, Shape, generate
from bot.core.memory.consolidation import ConsolidationPolicy, consolidate
from bot.core.memory.extraction import sentences
from bot.core.memory.operations import all_memories
from bot.core.memory.ports import Embedder
from bot.core.memory.recall import hybrid_search
from bot.core.models import Memory, Vector
from bot.core.store import Store

KS = (5, 10)
MODES = ("dense", "hybrid")
EMBED_BATCH = 64


async def load(store: Store, embedder: Embedder, data: Dataset) -> dict[int, str]:
    """Import every person's turns as bench/recall.py does; returns memory id → turn id."""
    memory_of = await recall.load(store, embedder, data)
    return {mid: turn_id for turn_id, mid in memory_of.items()}


def answers(memory: Memory, turn_of: dict[int, str], texts: dict[str, str], strict: bool) -> set[str]:
    """The turns a recalled memory stands for: its own, or those a summary covers (in full)."""
    if memory.kind != "summary":
        return {turn_of[memory.id]} if memory.id in turn_of else set()
    covers = memory.meta.get("covers")
    listed = covers if isinstance(covers, list) else []
    turns = {turn_of[m] for m in listed if isinstance(m, int) and m in turn_of}
    if not strict:
        return turns
    held = memory.text.lower()
    return {turn for turn in turns if all(s.lower() in held for s in sentences(texts[turn]))}


async def ask_all(
    store: Store, data: Dataset, vectors: Sequence[Vector], turn_of: dict[int, str], now: datetime
) -> dict[str, dict[str, float]]:
    texts = {turn.turn_id: turn.text for turn in data.turns}
    found: dict[str, list[bool]] = {}
    for question, vector in zip(data.questions, vectors, strict=True):
        for mode in MODES:
            hits = await hybrid_search(
                store, question.user_id, question.text, vector, max(KS), lexical=mode == "hybrid", now=now
            )
            for strict, name in ((False, "covers"), (True, "says")):
                for k in KS:
                    seen: set[str] = set()
                    for hit in hits[:k]:
                        seen |= answers(hit.memory, turn_of, texts, strict)
                    found.setdefault(f"{mode}.{name}.recall@{k}", []).append(set(question.gold) <= seen)
    report: dict[str, dict[str, float]] = {}
    for key, flags in sorted(found.items()):
        mode, name, metric = key.split(".")
        report.setdefault(f"{mode}.{name}", {})[metric] = round(sum(flags) / len(flags), 4)
    return report


async def rows(store: Store, data: Dataset) -> dict[str, int]:
    counts = {"rows": 0, "recallable": 0, "summaries": 0, "archived": 0}
    for user_id in data.users():
        async for memory in all_memories(store.memories, user_id):
            counts["rows"] += 1
            counts["recallable"] += memory.recallable
            counts["summaries"] += memory.kind == "summary"
            counts["archived"] += memory.status == "archived"
    return counts


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder

    base = QUICK if args.quick else Shape()
    shape = dataclasses.replace(base, seed=args.seed) if args.seed else base
    data = generate(shape)
    policy = ConsolidationPolicy()
    # Asked, and consolidated, a day after the last turn plus the policy's age: every session is old.
    now = max(turn.at for turn in data.turns) + policy.older_than + timedelta(days=1)
    embedder = SentenceTransformerEmbedder.load(batch_size=EMBED_BATCH)
    report: dict[str, Any] = {"benchmark": "consolidation_recall", "date": now_iso(), "machine": machine()}
    began = time.perf_counter()
    try:
        async with (
            server_for([args.backend], args.database_url) as server,
            open_store(args.backend, server) as opened,
        ):
            store = opened.store
            turn_of = await load(store, embedder, data)
            vectors = await embedder.embed([q.text for q in data.questions])
            before_rows, before = await rows(store, data), await ask_all(store, data, vectors, turn_of, now)
            log(f"before: {before_rows} {before}")
            totals = {"summaries": 0, "covered": 0, "archived": 0}
            for user_id in data.users():
                done = await consolidate(store, embedder, user_id, now, policy)
                for key, value in done.as_payload().items():
                    totals[key] += value
            after_rows, after = await rows(store, data), await ask_all(store, data, vectors, turn_of, now)
            log(f"after: {after_rows} {after}")
    finally:
        await embedder.close()
    report |= {
        "backend": args.backend,
        "dataset": {"users": shape.users, "sessions_per_user": shape.sessions, "turns": len(data.turns),
                    "questions": len(data.questions), "seed": shape.seed},
        "policy": {"older_than_days": policy.older_than.days, "budget": policy.budget,
                   "summary_chars": policy.summary_chars, "min_turns": policy.min_turns},
        "consolidation": totals,
        "rows": {"before": before_rows, "after": after_rows},
        "recall": {
            mode: {"before": before[f"{mode}.covers"], "after_covers": after[f"{mode}.covers"],
                   "after_says": after[f"{mode}.says"]}
            for mode in MODES
        },
        "seconds": round(time.perf_counter() - began, 1),
    }  # fmt: skip
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--quick", action="store_true", help="3 people, 12 sessions each")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--database-url", help="PostgreSQL server (else $BENCH_DATABASE_URL, else embedded)")
    args = parser.parse_args(argv)
    exit_cleanly_on_sigterm()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
