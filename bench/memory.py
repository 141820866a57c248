"""Memory benchmark: search and write latency on both stores, and pgvector's index recall.

For each backend and size: bulk-load memories spread over many users (random unit vectors, so that
100k rows load in minutes rather than after an hour of embedding), then time

- search, store part: `dense_search` for one user's top-10 with the query already embedded;
- search, end to end: embed the query with the real all-MiniLM-L6-v2, then `hybrid_search`;
- write: embed one turn and store it with `add_turn`, timed together (and the store part alone);
- on PostgreSQL, recall@10 of the HNSW path (`dense_search_index`) against `dense_search_exact`,
  for ordinary users and for one heavy user whose searches really take the index path. The heavy
  user's memories carry real embeddings: random vectors have no neighbourhoods, HNSW's worst case;
- embedding one short text with the product's embedder (ONNX Runtime unless told otherwise) and with
  sentence-transformers, alternately in the same run;
- import: `memory_ops.import_items` of a two-speaker conversation into a new person, in turns/s;
- extraction: `remember_turn` per stored user turn, rules only (statements, near-duplicates,
  contradictions), and once, on a fresh SQLite store, with the bundled model (SmolLM2-135M on the
  CPU) as well. It runs as the `kindred.memory.extract` job after the reply is stored: its cost is
  off the reply's path, and is not part of `write`.

Some queries run more than ten times in a row, so that a switch to a generic plan (prepared statements)
would show up in `full_results_ratio`: the share of searches that returned min(k, the user's memories).
Prints one JSON object on stdout; progress goes to stderr.

    .venv/bin/python -m bench.memory --quick
    .venv/bin/python -m bench.memory --backend postgres --sizes 100000 --database-url postgresql://...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.parts.common import exit_cleanly_on_sigterm, log, machine, now_iso, open_store, server_for
from bench.parts.memory import phases, speed
from bench.parts.memory.phases import Plan
from bot.core.memory.ports import Embedder

if TYPE_CHECKING:
    from bot.inference.engine.local import LocalInference

DEFAULT_SIZES = (10_000, 100_000)
QUICK_SIZES = (10_000,)
QUICK_QUERIES = 60
# Above pg_search.EXACT_SCAN_MAX, so that PostgreSQL's dense_search takes the HNSW path for them.
HEAVY_MEMORIES = 20_000
# Below it, to stay within two minutes: the index path is still measured through dense_search_index.
QUICK_HEAVY_MEMORIES = 6_000
POOL_SIZE = 8192
BULK_VECTORS = {
    "random": "random unit vectors",
    "pooled": f"real embeddings of {POOL_SIZE:,} chat-like texts, each reused with Gaussian noise "
    f"(sigma {phases.POOL_NOISE} per dimension)",
}
# Issue 11's targets, p95 on the 2-core machine. Per store where they differ.
TARGETS: dict[str, Any] = {
    "embed_one_p95_ms": 5.0,
    "embed_vs_sentence_transformers_p95": round(1 / 3, 4),
    "search_store_p95_ms": 10.0,
    "search_end_to_end_p95_ms": {"sqlite": 10.0, "postgres": 12.0},
    "write_p95_ms": {"sqlite": 12.0, "postgres": 15.0},
    "heavy_user_search_p95_ms": 15.0,
    "index_recall_at_10": 0.95,
    "import_turns_per_s": 150.0,
}
IMPORT_TURNS, QUICK_IMPORT_TURNS = 5882, 1500
EMBED_CALLS, QUICK_EMBED_CALLS = 300, 100
MODEL_TURNS, QUICK_MODEL_TURNS = 12, 3  # user turns extracted with the model: ~4 s each on 2 cores
OFF_REPLY_PATH = (
    "remember_turn runs as the kindred.memory.extract job after the reply is stored: "
    "not on the reply's path, not part of write"
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--sizes", help="memories in the table, comma-separated (default 10000,100000)")
    parser.add_argument("--users", type=int, default=1000, help="users the memories are spread over")
    parser.add_argument("--queries", type=int, help="timed searches and writes per size (default 200)")
    parser.add_argument(
        "--heavy-user",
        type=int,
        help=f"real-embedded memories of one heavy user (default {HEAVY_MEMORIES:,})",
    )
    parser.add_argument(
        "--bulk-vectors",
        choices=("random", "pooled"),
        default="random",
        help="random: fast; pooled: realistic neighbourhoods for the index recall",
    )
    parser.add_argument("--quick", action="store_true", help="10k only, fewer queries: under 2 minutes")
    parser.add_argument(
        "--extraction-model",
        default="bundled",
        help="model for the extraction timing: bundled (SmolLM2-135M), a model directory, "
        "or none to time the rules alone",
    )
    parser.add_argument(
        "--model-turns",
        type=int,
        help=f"user turns extracted with the model (default {MODEL_TURNS}, quick {QUICK_MODEL_TURNS})",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="where the bundled models are converted and exported (default: a temp dir)",
    )
    parser.add_argument(
        "--embedding-runtime",
        choices=("auto", "onnx", "torch"),
        default="auto",
        help="the product's embedder, as KINDRED_EMBEDDING_RUNTIME",
    )
    parser.add_argument(
        "--import-turns",
        type=int,
        help=f"turns imported per store (default {IMPORT_TURNS:,}, quick {QUICK_IMPORT_TURNS:,})",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database-url", help="PostgreSQL server (else $BENCH_DATABASE_URL, else embedded)")
    return parser.parse_args(argv)


def plan_from(args: argparse.Namespace) -> Plan:
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else None
    if args.quick:
        return Plan(
            sizes=sizes or QUICK_SIZES,
            users=args.users,
            queries=args.queries or QUICK_QUERIES,
            heavy_user=args.heavy_user or QUICK_HEAVY_MEMORIES,
            repeated=3,
            seed=args.seed,
        )
    return Plan(
        sizes=sizes or DEFAULT_SIZES,
        users=args.users,
        queries=args.queries or 200,
        heavy_user=args.heavy_user or HEAVY_MEMORIES,
        seed=args.seed,
    )


def _check(
    found: dict[str, Any], name: str, value: float, limit: float, below: bool, counts: bool = True
) -> None:
    met = value <= limit if below else value >= limit
    found[name] = {"value": value, "target": limit, "pass": bool(met), "counts_toward_pass": counts}


def checks(result: dict[str, Any], backend: str, pooled: bool) -> dict[str, Any]:
    """Each target of one store and size, with the measured value and whether it is met.

    The index recall of the bulk rows counts only for pooled vectors: random ones have no
    neighbourhoods, HNSW's worst case. The heavy user's vectors are real embeddings, so theirs counts.
    """
    found: dict[str, Any] = {}
    heavy = result["heavy_user"]
    _check(
        found, "search_store_p95_ms", result["search_store"]["p95_ms"], TARGETS["search_store_p95_ms"], True
    )
    _check(
        found,
        "search_end_to_end_p95_ms",
        result["search_end_to_end"]["p95_ms"],
        TARGETS["search_end_to_end_p95_ms"][backend],
        True,
    )
    _check(found, "write_p95_ms", result["write"]["p95_ms"], TARGETS["write_p95_ms"][backend], True)
    _check(found, "full_results_ratio", min(result["full_results_ratio"].values()), 1.0, False)
    _check(
        found,
        "heavy_user_search_store_p95_ms",
        heavy["search_store"]["p95_ms"],
        TARGETS["heavy_user_search_p95_ms"],
        True,
    )
    _check(
        found,
        "heavy_user_search_end_to_end_p95_ms",
        heavy["search_end_to_end"]["p95_ms"],
        TARGETS["heavy_user_search_p95_ms"],
        True,
    )
    _check(found, "heavy_user_full_results_ratio", min(heavy["full_results_ratio"].values()), 1.0, False)
    _check(found, "import_turns_per_s", result["import"]["turns_per_s"], TARGETS["import_turns_per_s"], False)
    recall = result.get("index_recall")
    if recall:
        _check(
            found, "index_recall_at_10", recall["recall_at_10"], TARGETS["index_recall_at_10"], False, pooled
        )
    heavy_recall = heavy.get("index_recall")
    if heavy_recall:
        _check(
            found,
            "heavy_user_index_recall_at_10",
            heavy_recall["recall_at_10"],
            TARGETS["index_recall_at_10"],
            False,
        )
        # The case is `pooled`: everyone else's vectors crowd the heavy person's neighbourhoods.
        found["heavy_user_index_recall_at_10"]["others_vectors"] = "pooled" if pooled else "random"
    return found


def embedding_checks(embedding: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    _check(found, "embed_one_p95_ms", embedding["product"]["p95_ms"], TARGETS["embed_one_p95_ms"], True)
    if "p95_ratio" in embedding:
        _check(
            found,
            "embed_vs_sentence_transformers_p95",
            embedding["p95_ratio"],
            TARGETS["embed_vs_sentence_transformers_p95"],
            True,
        )
    return found


async def one_size(
    backend: str,
    server: str | None,
    size: int,
    plan: Plan,
    embedder: Embedder,
    heavy: phases.Rows,
    pool: phases.Rows | None,
    import_turns: int,
) -> dict[str, Any]:
    rng = random.Random(plan.seed * 1_000_003 + size)
    async with open_store(backend, server) as opened:
        store = opened.store
        result: dict[str, Any] = {"memories": size, "users": plan.users, "store": opened.facts}
        counts, result["bulk_load"] = await phases.bulk_load(store, size, plan, rng, pool)
        if opened.dsn:
            await phases.analyze(opened.dsn)
        result["memories_per_user"] = phases.spread(counts)
        queries = phases.query_set(rng, plan, counts)
        vectors = await embedder.embed([q.text for q in queries])
        await phases.warm_up(store, embedder, queries[:10], vectors[:10])
        result |= await phases.searches(store, embedder, queries, vectors, counts)
        if opened.dsn:
            result["index_recall"] = await phases.index_recall(store, queries, vectors, counts)
        result |= await phases.writes(store, embedder, rng, plan.queries, sorted(counts))
        result["extraction_rules_only"] = await phases.extraction(
            store, embedder, rng, plan.queries, sorted(counts)
        )
        result["heavy_user"] = await phases.heavy_user(store, embedder, rng, opened.dsn, heavy)
        result["import"] = await speed.import_rate(store, embedder, rng, import_turns)
    # Other work on the machine shows up in the tails; this says how busy it was.
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["checks"] = checks(result, backend, pool is not None)
    return result


def load_model(model: str, data_dir: Path) -> LocalInference:
    """The local engine, loaded as the extraction job loads it (the product's sampling)."""
    from bot.inference.engine.local import LocalInference
    from bot.inference.model_files import prepare_model

    return LocalInference.load(prepare_model(model, data_dir), timeout_s=600.0)


async def with_model(
    model: str, data_dir: Path | None, turns: int, embedder: Embedder, plan: Plan
) -> dict[str, Any]:
    """Extraction with the model on a fresh SQLite store: the model's call is nearly all of it."""
    with tempfile.TemporaryDirectory(prefix="kindred-bench-model-") as scratch:
        log(f"extraction with the model {model!r}, {turns} user turns")
        began = time.perf_counter()
        engine = load_model(model, data_dir or Path(scratch))
        loaded = time.perf_counter() - began
        try:
            async with open_store("sqlite") as opened:
                rng = random.Random(plan.seed + 1)
                owners = ["bench-model-user"]
                found = await phases.extraction(opened.store, embedder, rng, turns, owners, engine)
        finally:
            await engine.close()
    return {
        "model": model,
        "device": "cpu",
        "load_seconds": round(loaded, 1),
        **found,
        "note": OFF_REPLY_PATH,
    }


def load_embedders(runtime: str, data_dir: Path) -> tuple[Embedder, Embedder | None]:
    """The product's embedder (as KINDRED_EMBEDDING_RUNTIME picks it) and sentence-transformers, to
    compare with; the second is None when the product's is sentence-transformers already."""
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder

    torch = SentenceTransformerEmbedder.load()
    if runtime == "torch":
        return torch, None
    from bot.core.errors import ConfigError
    from bot.inference.embedders.onnx import OnnxEmbedder

    try:
        return OnnxEmbedder.load(data_dir=data_dir), torch
    except ConfigError as exc:
        if runtime == "onnx":
            raise
        log(f"embedding with torch: {exc}")
        return torch, None


async def run(args: argparse.Namespace) -> dict[str, Any]:
    plan = plan_from(args)
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    import_turns = args.import_turns or (QUICK_IMPORT_TURNS if args.quick else IMPORT_TURNS)
    report: dict[str, Any] = {
        "benchmark": "memory",
        "date": now_iso(),
        "machine": machine(),
        "settings": {
            "k": phases.K,
            "users": plan.users,
            "sizes": list(plan.sizes),
            "queries": plan.queries,
            "repeated_queries": plan.repeated,
            "repeats_each": phases.REPEATS,
            "writes": plan.queries,
            "heavy_user_memories": plan.heavy_user,
            "quick": args.quick,
            "bulk_vectors": BULK_VECTORS[args.bulk_vectors],
            "heavy_user_vectors": "real all-MiniLM-L6-v2 embeddings",
            "timed_vectors": "real all-MiniLM-L6-v2 embeddings of the query or turn",
            "import_turns": import_turns,
            "extraction": OFF_REPLY_PATH,
        },
        "targets": TARGETS,
        "results": {},
    }
    with tempfile.TemporaryDirectory(prefix="kindred-bench-data-") as scratch:
        data_dir = args.data_dir or Path(scratch)
        embedder, torch = load_embedders(args.embedding_runtime, data_dir)
        report["embedding_model"] = embedder.model_name
        started = time.perf_counter()
        try:
            calls = QUICK_EMBED_CALLS if args.quick else EMBED_CALLS
            report["embedding"] = await speed.embed_one(embedder, torch, calls)
            if torch is not None:
                await torch.close()
            report["checks"] = embedding_checks(report["embedding"])
            texts_rng = random.Random(plan.seed)
            heavy = await phases.embedded_rows(embedder, texts_rng, plan.heavy_user)
            pool = None
            if args.bulk_vectors == "pooled":
                pool = await phases.embedded_rows(embedder, texts_rng, POOL_SIZE)
            async with server_for(backends, args.database_url) as server:
                for backend in backends:
                    for size in plan.sizes:
                        log(f"{backend}, {size:,} memories")
                        result = await one_size(
                            backend, server, size, plan, embedder, heavy, pool, import_turns
                        )
                        report["results"].setdefault(backend, {})[str(size)] = result
            if args.extraction_model != "none":
                turns = args.model_turns or (QUICK_MODEL_TURNS if args.quick else MODEL_TURNS)
                report["extraction_with_model"] = await with_model(
                    args.extraction_model, args.data_dir, turns, embedder, plan
                )
        finally:
            await embedder.close()
    report["pass"] = {
        backend: {
            size: all(c["pass"] for c in r["checks"].values() if c["counts_toward_pass"])
            for size, r in sizes.items()
        }
        for backend, sizes in report["results"].items()
    }
    report["pass_all"] = all(c["pass"] for c in report["checks"].values()) and all(
        passed for sizes in report["pass"].values() for passed in sizes.values()
    )
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    exit_cleanly_on_sigterm()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
