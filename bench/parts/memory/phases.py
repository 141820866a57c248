"""The steps of the memory benchmark, one function each: load, search, check the index, write, and
extract (what the `kindred.memory.extract` job does after a reply, off the reply's path)."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import numpy as np
import psycopg

from bench.parts.chatter import SMALL_TALK, assistant_line, chatter_line, fill
from bench.parts.common import log, millis
from bench.parts.recall.data import FAMILIES
from bot.core.chat.ports import Inference
from bot.core.memory.kinds import classify
from bot.core.memory.ports import Embedder
from bot.core.memory.recall import OVERFETCH, hybrid_search
from bot.core.memory.remember import remember_turn
from bot.core.models import MemoryHit, NewMemory, NewTurn, Vector
from bot.core.store import Store
from bot.core.text import query_terms

K = 10
REPEATS = 12  # more than psycopg's prepare threshold (5) plus PostgreSQL's five custom plans
LOAD_BATCH = 2000
EMBED_CHUNK = 1024
# Per-dimension noise on pooled vectors: a copy keeps cosine ≈ 0.98 with its pool vector.
POOL_NOISE = 0.01
DIM = 384
BULK_MODEL = "bench/random-unit-vectors"
REAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
HEAVY_USER = "bench-heavy-user"
YEAR_S = 365 * 24 * 3600
HEAVY_QUERIES = 40
TIE_EPSILON = 1e-5
# What people say that makes older memories untrue: these take extraction's contradiction path.
CHANGES = (
    "I moved to {city} last month.",
    "I'm not vegetarian any more.",
    "I no longer work at Acme.",
    "{first}'s closed down, such a shame.",
    "I don't play the piano any more.",
)


@dataclass(frozen=True, slots=True)
class Plan:
    sizes: tuple[int, ...]
    users: int
    queries: int
    heavy_user: int
    repeated: int = 5  # queries that run REPEATS times in a row
    seed: int = 7


@dataclass(frozen=True, slots=True)
class Query:
    user_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Rows:
    """Texts with their real embeddings, made once and loaded into every store."""

    texts: list[str]
    vectors: Vector


async def embedded_rows(embedder: Embedder, rng: random.Random, count: int) -> Rows:
    texts = [bulk_text(rng) for _ in range(count)]
    started = time.perf_counter()
    vectors: list[Vector] = []
    for start in range(0, count, EMBED_CHUNK):
        vectors += await embedder.embed(texts[start : start + EMBED_CHUNK])
    log(f"embedded {count:,} texts in {time.perf_counter() - started:.1f}s")
    return Rows(texts, np.stack(vectors))


class ExactAndIndex(Protocol):
    """The two dense paths the PostgreSQL store offers next to `dense_search`."""

    async def dense_search_index(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]: ...

    async def dense_search_exact(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]: ...


def user_name(index: int) -> str:
    return f"bench-user-{index:05d}"


def bulk_text(rng: random.Random) -> str:
    """A realistic-looking memory: chatter, a companion's reply, a stated fact, or small talk."""
    roll = rng.random()
    if roll < 0.45:
        return chatter_line(rng)
    if roll < 0.70:
        return assistant_line(rng)
    if roll < 0.90:
        family = rng.choice(FAMILIES)
        return fill(rng.choice(family.statements), _values(rng, family.slots))
    return rng.choice(SMALL_TALK)


def question_text(rng: random.Random) -> str:
    family = rng.choice(FAMILIES)
    questions = [*family.keyed, *family.paraphrases]
    return fill(rng.choice(questions), _values(rng, family.slots))


def _values(rng: random.Random, slots: Any) -> dict[str, str]:
    from bench.parts.recall.facts import SHARED

    return {name: rng.choice(options) for name, options in {**SHARED, **slots}.items()}


def random_units(rng: np.random.Generator, count: int) -> Vector:
    vectors: Vector = rng.standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


async def load_rows(
    store: Store, rng: random.Random, owners: Sequence[str], counts: Counter[str], rows: Rows | None = None
) -> float:
    """Store one memory per owner in big batches; seconds taken.

    Without `rows`: chat-like text with random unit vectors. With them: those texts and embeddings.
    """
    vectors_rng = np.random.default_rng(rng.randrange(2**32))
    now = datetime.now(UTC)
    started = time.perf_counter()
    for start in range(0, len(owners), LOAD_BATCH):
        batch = owners[start : start + LOAD_BATCH]
        if rows is None:
            texts = [bulk_text(rng) for _ in batch]
            vectors, model = random_units(vectors_rng, len(batch)), BULK_MODEL
        else:
            texts = rows.texts[start : start + LOAD_BATCH]
            vectors, model = rows.vectors[start : start + LOAD_BATCH], REAL_MODEL
        await store.memories.add_memories(
            [
                NewMemory(
                    user_id=owner,
                    text=text,
                    speaker=rng.choice(("user", "assistant")),
                    created_at=now - timedelta(seconds=rng.randrange(YEAR_S)),
                    embedding=vector,
                    embedding_model=model,
                )
                for owner, text, vector in zip(batch, texts, vectors, strict=True)
            ]
        )
        counts.update(batch)
        if (start // LOAD_BATCH) % 10 == 9:
            log(f"  loaded {start + len(batch):,} of {len(owners):,}")
    return time.perf_counter() - started


def pooled_rows(pool: Rows, rng: random.Random, count: int) -> Rows:
    """`count` rows drawn from a pool of real embeddings, each with a little noise of its own."""
    picks = [rng.randrange(len(pool.texts)) for _ in range(count)]
    noise_rng = np.random.default_rng(rng.randrange(2**32))
    vectors: Vector = pool.vectors[picks] + noise_rng.normal(0.0, POOL_NOISE, (count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return Rows([pool.texts[i] for i in picks], vectors)


async def bulk_load(
    store: Store, size: int, plan: Plan, rng: random.Random, pool: Rows | None
) -> tuple[Counter[str], dict[str, Any]]:
    owners = [user_name(rng.randrange(plan.users)) for _ in range(size)]
    counts: Counter[str] = Counter()
    rows = pooled_rows(pool, rng, size) if pool else None
    seconds = await load_rows(store, rng, owners, counts, rows)
    log(f"  bulk load: {size:,} rows in {seconds:.1f}s")
    return counts, {"seconds": round(seconds, 1), "rows_per_s": round(size / seconds), "batch": LOAD_BATCH}


async def analyze(dsn: str) -> float:
    """VACUUM ANALYZE, as autovacuum would after a bulk load; returns the planner's row estimate."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("VACUUM ANALYZE memories")
        cursor = await conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass")
        row = await cursor.fetchone()
    return float(row[0]) if row else 0.0


def spread(counts: Counter[str]) -> dict[str, float]:
    values = sorted(counts.values())
    return {"min": values[0], "median": values[len(values) // 2], "max": values[-1]}


def query_set(rng: random.Random, plan: Plan, counts: Counter[str]) -> list[Query]:
    """`plan.queries` searches of random users, then the first few again, each REPEATS times in a row."""
    owners = sorted(counts)
    single = [Query(rng.choice(owners), question_text(rng)) for _ in range(plan.queries)]
    return single + [query for query in single[: plan.repeated] for _ in range(REPEATS)]


def _full(hits: Sequence[object], count: int) -> bool:
    return len(hits) == min(K, count)


async def warm_up(
    store: Store, embedder: Embedder, queries: Sequence[Query], vectors: Sequence[Vector]
) -> None:
    for query, vector in zip(queries, vectors, strict=True):
        await store.memories.dense_search(query.user_id, vector, K)
        await hybrid_search(store, query.user_id, query.text, vector, K)
        await embedder.embed([query.text])


async def searches(
    store: Store,
    embedder: Embedder,
    queries: Sequence[Query],
    vectors: Sequence[Vector],
    counts: Counter[str],
) -> dict[str, Any]:
    store_s: list[float] = []
    full_store: list[bool] = []
    for query, vector in zip(queries, vectors, strict=True):
        began = time.perf_counter()
        hits = await store.memories.dense_search(query.user_id, vector, K)
        store_s.append(time.perf_counter() - began)
        full_store.append(_full(hits, counts[query.user_id]))
    total_s: list[float] = []
    embed_s: list[float] = []
    hybrid_s: list[float] = []
    full_hybrid: list[bool] = []
    for query in queries:
        began = time.perf_counter()
        [vector] = await embedder.embed([query.text])
        embedded = time.perf_counter()
        found = await hybrid_search(store, query.user_id, query.text, vector, K)
        ended = time.perf_counter()
        total_s.append(ended - began)
        embed_s.append(embedded - began)
        hybrid_s.append(ended - embedded)
        full_hybrid.append(_full(found, counts[query.user_id]))
    store_p95, total_p95 = millis(store_s)["p95_ms"], millis(total_s)["p95_ms"]
    lexical_s: list[float] = []
    for query in queries:
        terms = query_terms(query.text)
        began = time.perf_counter()
        await store.memories.lexical_search(query.user_id, terms, K * OVERFETCH)
        lexical_s.append(time.perf_counter() - began)
    log(f"  searches: store p95 {store_p95} ms, end to end p95 {total_p95} ms")
    return {
        "search_store": millis(store_s),
        "search_end_to_end": millis(total_s),
        "search_end_to_end_parts": {
            "embed_query": millis(embed_s),
            "hybrid_search": millis(hybrid_s),
            "lexical_search_alone": millis(lexical_s),
        },
        "full_results_ratio": {
            "store": sum(full_store) / len(full_store),
            "end_to_end": sum(full_hybrid) / len(full_hybrid),
        },
    }


def _recall(approximate: Sequence[MemoryHit], exact: Sequence[MemoryHit]) -> float:
    """Share of the true top-k found. Ties count: any hit as similar as the k-th true one is right,
    as in ANN benchmarks, since equal texts have equal vectors and either id is a correct answer."""
    threshold = min(hit.score for hit in exact) - TIE_EPSILON
    right = sum(1 for hit in approximate if hit.score >= threshold)
    return min(right, len(exact)) / len(exact)


async def index_recall(
    store: Store, queries: Sequence[Query], vectors: Sequence[Vector], counts: Counter[str]
) -> dict[str, Any]:
    """Recall@K of the HNSW path against the exact scan, per query, and how long each path took."""
    if not hasattr(store, "dense_search_index") or not hasattr(store, "dense_search_exact"):
        return {"error": "this store has no dense_search_index / dense_search_exact"}
    paths: ExactAndIndex = store  # type: ignore[assignment]
    recalls: list[float] = []
    worst: list[tuple[float, str, list[float], list[float]]] = []
    full: list[bool] = []
    index_s: list[float] = []
    exact_s: list[float] = []
    seen: set[Query] = set()
    for query, vector in zip(queries, vectors, strict=True):
        if query in seen:
            continue
        seen.add(query)
        began = time.perf_counter()
        approximate = await paths.dense_search_index(query.user_id, vector, K)
        middle = time.perf_counter()
        exact = await paths.dense_search_exact(query.user_id, vector, K)
        index_s.append(middle - began)
        exact_s.append(time.perf_counter() - middle)
        if exact:
            recalls.append(_recall(approximate, exact))
            scores = ([round(h.score, 3) for h in exact], [round(h.score, 3) for h in approximate])
            worst.append((recalls[-1], query.text, *scores))
        full.append(_full(approximate, counts[query.user_id]))
    log(f"  index recall@{K}: {np.mean(recalls):.4f}")
    return {
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "worst_query_recall": round(float(np.min(recalls)), 4),
        "queries": len(recalls),
        "lowest": [
            {"recall": round(value, 2), "query": text, "exact_scores": truth, "index_scores": found}
            for value, text, truth, found in sorted(worst)[:3]
        ],
        "full_results_ratio": sum(full) / len(full),
        "index_path": millis(index_s),
        "exact_path": millis(exact_s),
    }


async def writes(
    store: Store, embedder: Embedder, rng: random.Random, count: int, owners: Sequence[str]
) -> dict[str, Any]:
    """One turn at a time: embed it, then `add_turn`. Timed together and apart."""
    total_s: list[float] = []
    store_s: list[float] = []
    for number in range(count):
        text = bulk_text(rng)
        began = time.perf_counter()
        [vector] = await embedder.embed([text])
        embedded = time.perf_counter()
        await store.turns.add_turn(
            NewTurn(
                user_id=rng.choice(owners),
                chat_id="bench",
                role="user" if number % 2 else "assistant",
                text=text,
                embedding=vector,
                embedding_model=embedder.model_name,
                created_at=datetime.now(UTC),
                idempotency_key=f"bench-{rng.getrandbits(64):016x}",
            )
        )
        ended = time.perf_counter()
        total_s.append(ended - began)
        store_s.append(ended - embedded)
    log(f"  writes: p95 {millis(total_s)['p95_ms']} ms (store part {millis(store_s)['p95_ms']} ms)")
    return {"write": millis(total_s), "write_store_only": millis(store_s)}


async def heavy_user(
    store: Store, embedder: Embedder, rng: random.Random, dsn: str | None, rows: Rows
) -> dict[str, Any]:
    """One person with many real-embedded memories: on PostgreSQL, `dense_search` walks HNSW for them."""
    size = len(rows.texts)
    counts: Counter[str] = Counter()
    seconds = await load_rows(store, rng, [HEAVY_USER] * size, counts, rows)
    log(f"  heavy user: {size:,} rows in {seconds:.1f}s")
    found: dict[str, Any] = {
        "memories": size,
        "vectors": "real all-MiniLM-L6-v2 embeddings",
        "load_seconds": round(seconds, 1),
    }
    if dsn:
        from bot.store.postgres import search as pg_search

        table_rows = await analyze(dsn)
        walks = pg_search.walks_index(size, table_rows, K, pg_search.EXACT_SCAN_MAX)
        found["dense_search_path"] = "hnsw" if walks else "exact"
    queries = [Query(HEAVY_USER, question_text(rng)) for _ in range(HEAVY_QUERIES)]
    queries += [query for query in queries[:2] for _ in range(REPEATS)]
    vectors = await embedder.embed([query.text for query in queries])
    found |= await searches(store, embedder, queries, vectors, counts)
    if dsn:
        found["index_recall"] = await index_recall(store, queries, vectors, counts)
    return found


def user_text(rng: random.Random) -> str:
    """A person's turn: a stated fact half the time, else chatter, now and then a change of fact."""
    roll = rng.random()
    if roll < 0.1:
        return fill(rng.choice(CHANGES), _values(rng, {}))
    if roll < 0.55:
        family = rng.choice(FAMILIES)
        return fill(rng.choice(family.statements), _values(rng, family.slots))
    return chatter_line(rng) if roll < 0.9 else rng.choice(SMALL_TALK)


async def extraction(
    store: Store,
    embedder: Embedder,
    rng: random.Random,
    count: int,
    owners: Sequence[str],
    inference: Inference | None = None,
) -> dict[str, Any]:
    """`remember_turn` timed on its own for each of `count` stored user turns: the extraction job's
    work (rules; the model too when `inference` is given). It runs after the reply is stored, as a
    job, so none of this is on the reply's path. The turn's own embedding and storing are not in it."""
    spent: list[float] = []
    changed = {"added": 0, "updated": 0, "superseded": 0, "by_model": 0}
    for _ in range(count):
        text, owner = user_text(rng), rng.choice(owners)
        [vector] = await embedder.embed([text])
        at = datetime.now(UTC)
        turn = await store.turns.add_turn(
            NewTurn(
                user_id=owner,
                chat_id="bench",
                role="user",
                text=text,
                embedding=vector,
                embedding_model=embedder.model_name,
                created_at=at,
                meta={"chat_id": "bench"},
                memory_kind=classify(text),
                idempotency_key=f"bench-x-{rng.getrandbits(64):016x}",
            )
        )
        began = time.perf_counter()
        done = await remember_turn(store, embedder, owner, turn.memory_id, at, inference=inference)
        spent.append(time.perf_counter() - began)
        for name in ("added", "updated", "superseded"):
            changed[name] += len(getattr(done, name))
        made = await store.curation.get_memories(owner, [*done.added, *done.updated])
        changed["by_model"] += sum(m.meta.get("extracted_by") == "model" for m in made)
    label = "with the model" if inference is not None else "rules only"
    log(f"  extraction ({label}): p95 {millis(spent)['p95_ms']} ms per user turn")
    return {"per_user_turn": millis(spent), "memories": changed}
