"""Recall benchmark: does Kindred find the turns that answer a question, on a generated set and a real one?

Two datasets, each imported through `kindred memory import`'s path (text, speaker, timestamp) with
the real all-MiniLM-L6-v2 embedder and asked with k=10, without consolidation, by every method in
bench/parts/recall/eval.py (dense, lexical, hybrid as shipped, ...):

* generated: long multi-session chats with a companion (bench/parts/recall/data.py). Kindred's earlier
  rules were tuned on it, so it is one split, `all`, and no proof.
* locomo: LoCoMo's long conversations between two named people (bench/parts/recall/locomo.py), from a
  local copy given with `--locomo DIR`; nothing is fetched. Split by conversation into `dev` (tune here) and
  `test` (report only).

recall@10 is the share of a question's evidence turns in the top 10, averaged over questions.

Then curated memory (bench/parts/recall/contradictions.py): other people's turns go in the way the product
stores them, with `remember_turn` (rules only) after each user turn, and questions on the simulated
clock check that contradicted facts stay out of the top 5 and that a months-old event does not
outrank a stable preference on its topic. Prints one JSON object on stdout; its last key,
`datasets.<name>.<split>.<method>`, holds recall_at_10 and n.

    .venv/bin/python -m bench.recall --quick
    .venv/bin/python -m bench.recall --locomo ~/data/locomo/data/multimodal_dialog/locomo10_v2
    .venv/bin/python -m bench.recall --backend postgres --database-url postgresql://...
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.parts.common import exit_cleanly_on_sigterm, log, machine, millis, now_iso, open_store, server_for
from bench.parts.recall import contradictions as curated
from bench.parts.recall import locomo
from bench.parts.recall.data import FAMILIES, QUICK, Dataset, Shape, generate, overlap_summary
from bench.parts.recall.eval import METHODS, Answer, Case, ask_all, by_group, by_method
from bot.core.memory.indexing import SHIPPED_INDEXING, Indexing
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.operations import import_items
from bot.core.memory.ports import Embedder
from bot.core.store import Store

LEXICAL_RANKING = {
    "sqlite": "FTS5 bm25, porter stemmer",
    "postgres": "ts_rank_cd over websearch_to_tsquery('english')",
}
# "Clearly better" on the generated set: hybrid must find this much more at k=10 than dense alone.
MIN_DELTA_AT_10 = 0.03
# On the real set's test half: an absolute floor, and a margin over dense search with speakers.
REAL_RECALL_AT_10 = 0.65
REAL_MARGIN_OVER_DENSE = 0.15
EMBED_BATCH = 64
QUICK_CONVERSATIONS = 2
# Indexing rules measured by leaving them out (`--ablate`), by the suffix their method names get.
INDEXINGS = {
    "": SHIPPED_INDEXING,
    "_without_context": dataclasses.replace(SHIPPED_INDEXING, short_turn_words=0),
    "_text_only": Indexing(speakers=False, short_turn_words=0),
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--quick", action="store_true", help="a small set: about a minute on 2 cores")
    parser.add_argument(
        "--locomo",
        type=Path,
        metavar="DIR",
        help="a local copy of LoCoMo's locomo10 conversations (*.json); without it, "
        "only the generated set is measured",
    )
    parser.add_argument(
        "--conversations",
        type=int,
        help=f"LoCoMo conversations to use (default all, quick {QUICK_CONVERSATIONS})",
    )
    parser.add_argument(
        "--ablate",
        action="store_true",
        help="LoCoMo again without each indexing rule (speakers, previous turn)",
    )
    parser.add_argument("--users", type=int, help="people (default 8, quick 3)")
    parser.add_argument("--sessions", type=int, help="sessions per person (default 40, quick 12)")
    parser.add_argument("--facts", type=int, help=f"facts per person, at most {len(FAMILIES)}")
    parser.add_argument("--repeats", type=int, help="second facts of a kind per person (default 8, quick 4)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--database-url", help="PostgreSQL server (else $BENCH_DATABASE_URL, else embedded)")
    parser.add_argument(
        "--show-misses",
        type=int,
        default=0,
        metavar="N",
        help="print N questions hybrid search missed at k=10 to stderr",
    )
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
        ids = await import_items(store.memories, embedder, user_id, items)
        memory_of.update({turn.turn_id: mid for turn, mid in zip(turns, ids, strict=True)})
        log(f"imported {len(turns)} turns of {user_id}")
    return memory_of


def generated_cases(data: Dataset, memory_of: dict[str, int]) -> list[Case]:
    return [
        Case(q.user_id, q.text, frozenset(memory_of[gold] for gold in q.gold), q.kind) for q in data.questions
    ]


async def load_conversation(
    store: Store, embedder: Embedder, conversation: locomo.Conversation, variant: str = ""
) -> list[Case]:
    """One conversation imported as one person's memories (text, speaker, session time), through
    the memory CLI's path, indexed as `variant` says; returns its questions as cases, adversarial
    ones included."""
    user_id = f"locomo:{conversation.name}{variant}"
    items = [
        ImportItem(line, turn.text, turn.speaker, turn.at, {"dia_id": turn.dia_id})
        for line, turn in enumerate(conversation.turns, start=1)
    ]
    ids = await import_items(store.memories, embedder, user_id, items, INDEXINGS[variant])
    memory_of = {turn.dia_id: mid for turn, mid in zip(conversation.turns, ids, strict=True)}
    log(f"imported {len(ids)} turns of {user_id}")
    return [
        Case(user_id, q.text, frozenset(memory_of[dia] for dia in q.evidence), locomo.CATEGORIES[q.category])
        for q in conversation.questions
    ]


async def measure_locomo(
    store: Store, embedder: Embedder, conversations: list[locomo.Conversation], show: int, ablate: bool
) -> dict[str, Any]:
    """Both halves, every method. Adversarial questions are reported apart, not in the halves.
    `ablate`: each conversation is imported once more for each indexing rule left out, and every
    method runs on those too (its name says which rule is off)."""
    halves: dict[str, Any] = {}
    groups: dict[str, Any] = {}
    adversarial: list[Answer] = []
    halves_of = locomo.split(conversations)
    for half, members in halves_of.items():
        answers = []
        for variant in INDEXINGS if ablate else [""]:
            cases: list[Case] = []
            for member in members:
                cases += await load_conversation(store, embedder, member, variant)
            answers += renamed(await ask_all(store, embedder, cases, METHODS), variant)
        main = [a for a in answers if a.case.group != locomo.CATEGORIES[locomo.ADVERSARIAL]]
        adversarial += [a for a in answers if a not in main]
        halves[half] = by_method(main)
        groups[half] = by_group(main)
        if show:
            await show_misses(store, main, show)
    halves["conversations"] = {half: [c.name for c in members] for half, members in halves_of.items()}
    return {"splits": halves, "by_category": groups, "adversarial_all": by_method(adversarial)}


def renamed(answers: list[Answer], suffix: str) -> list[Answer]:
    return [dataclasses.replace(a, method=a.method + suffix) for a in answers] if suffix else answers


async def show_misses(store: Store, answers: Sequence[Answer], count: int) -> None:
    missed = [a for a in answers if a.method == "hybrid" and a.share(10) < 1.0][:count]
    for answer in missed:
        gold = await store.curation.get_memories(answer.case.user_id, sorted(answer.case.gold))
        got = await store.curation.get_memories(answer.case.user_id, answer.top[:3])
        log(f"[hybrid miss, {answer.case.group}] {answer.case.text!r}")
        for memory in gold:
            log(f"      gold: {memory.speaker}: {memory.text!r}")
        for memory in got:
            log(f"      got:  {memory.speaker}: {memory.text!r}")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder

    report: dict[str, Any] = {"benchmark": "recall", "date": now_iso(), "machine": machine()}
    started = time.perf_counter()
    shape = shape_from(args)
    data = generate(shape)
    log(f"generated {len(data.turns)} turns and {len(data.questions)} questions")
    conversations = locomo.load(args.locomo) if args.locomo else []
    wanted = args.conversations or (QUICK_CONVERSATIONS if args.quick else len(conversations))
    conversations = conversations[:wanted]
    embedder = SentenceTransformerEmbedder.load(batch_size=EMBED_BATCH)
    timings: dict[str, float] = {"generate_and_load_model": time.perf_counter() - started}
    real: dict[str, Any] | None = None
    try:
        async with (
            server_for([args.backend], args.database_url) as server,
            open_store(args.backend, server) as opened,
        ):
            store, store_facts = opened.store, opened.facts
            began = time.perf_counter()
            memory_of = await load(store, embedder, data)
            timings["import_with_embeddings"] = time.perf_counter() - began
            began = time.perf_counter()
            answers = await ask_all(store, embedder, generated_cases(data, memory_of), METHODS)
            timings["questions"] = time.perf_counter() - began
            if args.show_misses:
                await show_misses(store, answers, args.show_misses)
            if conversations:
                began = time.perf_counter()
                real = await measure_locomo(store, embedder, conversations, args.show_misses, args.ablate)
                timings["locomo_import_and_questions"] = time.perf_counter() - began
            began = time.perf_counter()
            people = curated.generate(shape.users, shape.sessions, shape.seed)
            log(f"curated memory: {len(people.said)} user turns, {len(people.probes)} questions")
            found = await curated.evaluate(store, embedder, people, args.show_misses)
            timings["contradictions_and_aged_events"] = time.perf_counter() - began
    finally:
        await embedder.close()
    generated = by_method(answers)
    datasets: dict[str, Any] = {"generated": {"all": generated}}
    delta = round(float(generated["hybrid"]["recall_at_10"]) - float(generated["dense"]["recall_at_10"]), 4)
    targets: dict[str, Any] = {
        "generated_hybrid_minus_dense_recall_at_10": {
            "at_least": MIN_DELTA_AT_10,
            "value": delta,
            "pass": delta >= MIN_DELTA_AT_10,
        },
    }
    if real is not None:
        splits = real.pop("splits")
        real_test = splits.get("test", {})
        datasets["locomo"] = {half: splits[half] for half in ("dev", "test") if half in splits}
        if "hybrid" in real_test:
            value = float(real_test["hybrid"]["recall_at_10"])
            margin = round(value - float(real_test["dense"]["recall_at_10"]), 4)
            targets["locomo_test_hybrid_recall_at_10"] = {
                "at_least": REAL_RECALL_AT_10,
                "value": value,
                "pass": value >= REAL_RECALL_AT_10,
            }
            targets["locomo_test_hybrid_minus_dense_recall_at_10"] = {
                "at_least": REAL_MARGIN_OVER_DENSE,
                "value": margin,
                "pass": margin >= REAL_MARGIN_OVER_DENSE,
            }
        real["conversations"] = splits["conversations"]
        real["questions"] = "categories 1-4; category 5 (adversarial) only in adversarial_all"
    report |= {
        "backend": args.backend,
        "lexical_ranking": LEXICAL_RANKING[args.backend],
        "store": store_facts,
        "embedding_model": embedder.model_name,
        "metric": "recall_at_10: share of a question's evidence turns in the top 10, averaged over "
        "questions; all_found_at_10: share of questions with all their evidence there",
        "generated": {
            "seed": shape.seed,
            "users": shape.users,
            "sessions_per_user": shape.sessions,
            "sessions": shape.users * shape.sessions,
            "turns": len(data.turns),
            "user_turns": sum(turn.speaker == "user" for turn in data.turns),
            "questions": len(data.questions),
            "fact_families": len(FAMILIES),
            "share_of_questions_with_no_content_word_in_common": overlap_summary(data),
            "by_kind": by_group(answers),
        },
        "locomo": real,
        "targets": targets,
        "curated": {
            "people": shape.users,
            "user_turns": len(people.said),
            "path": "add_turn (rules' kind), reply, remember_turn (rules only); "
            "upkeep (checks, consolidation) the night after each session and at question time",
            "contradictions": found["contradictions"],
            "aged_events": found["aged_events"],
            "upkeep": found["upkeep"],
            "extraction_per_user_turn": millis(found["extraction_s"]),
        },
        "timings_s": {name: round(value, 1) for name, value in timings.items()},
    }
    # Last, so that the JSON's tail is the answer: every set, split and method.
    report["datasets"] = datasets
    return report


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    exit_cleanly_on_sigterm()
    report = asyncio.run(run(args))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
