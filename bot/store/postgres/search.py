"""Per-user dense and full-text search over the `memories` table.

Every search is for one person, but an HNSW index spans everyone. Left to itself, PostgreSQL may walk
that index in distance order and drop other people's rows afterwards: a person who owns 0.1 % of the
rows then gets about ef_search × 0.1 % results. That is mem0's "1.8 of 10", and a generic plan (what
psycopg's server-side prepared statements lead to) picks it every time. So dense search takes one of
two paths, by the person's `users.memory_count` and their share of the table:

* Up to `EXACT_SCAN_MAX` memories, which is nearly everyone: read that person's rows through the
  (user_id, id) btree and rank them all. A MATERIALIZED CTE with no ORDER BY fences the planner off
  the HNSW index. Exact, and at that size no slower than an index walk.
* Above it, if the person also owns enough of the table (`walks_index`): walk HNSW with iterative
  scan (pgvector >= 0.8). The scan goes on until k rows pass the user filter or
  `hnsw.max_scan_tuples` is reached. `relaxed_order` may return them slightly out of order, so the
  outer query sorts again. A heavy user in a huge table still gets the exact scan: the filtered
  walk would visit about k / share rows, which costs more than reading theirs.

Not chosen: a partial HNSW index per user (DDL for each new person, thousands of indexes, and the
planner must match each predicate), and partitioning by user (hash partitions still mix many people
per partition, so the filter problem stays; one partition per person does not scale in count). Both
pay off only once one table outgrows a machine (DESIGN.md, "Past one machine").

Every path returns recallable memories only (status active or past): the filter sits inside the
fence on the exact path, and is one more condition the iterative HNSW scan keeps walking past.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.rows import DictRow

from bot.core.models import MemoryHit, Vector
from bot.store.postgres.pool import Connection
from bot.store.postgres.rows import POSTGRES
from bot.store.sql.rows import MEMORY_COLUMNS, memory_from_row, recallable, select_list

_COLUMNS = select_list(MEMORY_COLUMNS, "m")

# Measured on 2 cores: an exact scan of 10k rows (~12 ms) costs what the HNSW walk's fixed part does.
EXACT_SCAN_MAX = 10_000
# One row visited by a filtered HNSW walk costs about this many rows of an exact scan.
WALK_COST_RATIO = 10
# Candidate list of the HNSW walk. The default (40) is tuned for unfiltered top-10.
HNSW_EF_SEARCH = 1000  # 200 gave recall 0.61 for a heavy user among near-duplicate vectors
HNSW_EF_SEARCH_LIMIT = 1000  # pgvector refuses more; iterative scan fetches past it anyway
# Rows the iterative scan may visit before it gives up on filling k (pgvector's default: 20 000).
HNSW_MAX_SCAN_TUPLES = 100_000

_EXACT_SQL = f"""
WITH scored AS MATERIALIZED (
    SELECT id, embedding <=> %(vector)s AS distance FROM memories
    WHERE user_id = %(user_id)s AND {recallable()}
), nearest AS (
    SELECT id, distance FROM scored ORDER BY distance, id LIMIT %(k)s
)
SELECT {_COLUMNS}, 1 - n.distance AS score
FROM nearest n JOIN memories m ON m.id = n.id
ORDER BY n.distance, n.id
"""

# enable_seqscan: the hidden user filter gets a default 0.5 per cent selectivity estimate, so for
# k = 40 the planner would rather scan the table and sort. This path is chosen to walk the index.
_HNSW_SETTINGS_SQL = """
SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
       set_config('hnsw.ef_search', %(ef_search)s, true),
       set_config('hnsw.max_scan_tuples', %(max_scan_tuples)s, true),
       set_config('enable_seqscan', 'off', true)
"""

# `user_id || ''` is the same filter, hidden from the (user_id, id) btree: this path must walk HNSW.
_HNSW_SQL = f"""
WITH nearest AS MATERIALIZED (
    SELECT id, embedding <=> %(vector)s AS distance FROM memories
    WHERE user_id || '' = %(user_id)s AND {recallable()}
    ORDER BY embedding <=> %(vector)s
    LIMIT %(k)s
)
SELECT {_COLUMNS}, 1 - n.distance AS score
FROM nearest n JOIN memories m ON m.id = n.id
ORDER BY n.distance, n.id
"""

# Okapi BM25, as FTS5's bm25() computes it, over one person's recallable memories: idf from how many
# of them hold each query lexeme, term frequency saturated by K1 and normalised by length (B).
# ts_rank_cd has no idf, so over all of a question's words it lets common ones decide. Every
# candidate matches some lexeme, so each lexeme's document frequency is counted among them.
# A lexeme found only in the context (weight B) counts CONTEXT_WEIGHT times, as on SQLite.
# The person's count of searched memories and their total length are kept in `users` by a trigger
# (schema/postgres/0009_lexical_stats.sql): counting them here read every row of the person, which
# for 20,000 memories was most of the search's time.
BM25_K1 = 1.2
BM25_B = 0.75
CONTEXT_WEIGHT = 0.5
_LEXICAL_SQL = f"""
WITH q AS (
    SELECT websearch_to_tsquery('english', %(query)s) AS query,
           tsvector_to_array(to_tsvector('english', %(words)s)) AS lexemes
), person AS (
    SELECT lexical_docs AS n, greatest(lexical_length::numeric / greatest(lexical_docs, 1), 1) AS avgdl
    FROM users WHERE id = %(user_id)s
), hits AS (
    SELECT m.id, m.tsv FROM memories m, q
    WHERE m.user_id = %(user_id)s AND m.tsv @@ q.query AND {recallable("m.status")}
), terms AS (
    SELECT h.id, u.lexeme, length(h.tsv) AS dl,
           (SELECT coalesce(sum(CASE w WHEN 'A' THEN 1.0 ELSE {CONTEXT_WEIGHT} END), 1.0)
            FROM unnest(u.weights) AS w) AS tf
    FROM hits h, q, unnest(h.tsv) AS u
    WHERE u.lexeme = ANY (q.lexemes)
), df AS (
    SELECT lexeme, count(*) AS df FROM terms GROUP BY lexeme
), scored AS (
    SELECT t.id, sum(
        ln(1 + (p.n - d.df + 0.5) / (d.df + 0.5))
        * t.tf * ({BM25_K1} + 1) / (t.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * t.dl / p.avgdl))
    ) AS score
    FROM terms t JOIN df d USING (lexeme), person p
    GROUP BY t.id
)
SELECT {_COLUMNS}, s.score AS score
FROM scored s JOIN memories m ON m.id = s.id
ORDER BY s.score DESC, m.id DESC
LIMIT %(k)s
"""


def walks_index(count: int, table_rows: float, k: int, exact_scan_max: int) -> bool:
    """Whether the HNSW walk should beat the exact scan for someone with `count` of `table_rows`."""
    few_rows = count <= exact_scan_max
    # Stale statistics can count fewer rows than this person alone has.
    rows_visited = k * max(table_rows, count) / max(count, 1)
    short_walk = rows_visited * WALK_COST_RATIO < count
    return not few_rows and short_walk


async def dense_exact(conn: Connection, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
    """Exact top-k by cosine similarity over one person's rows."""
    cursor = await conn.execute(_EXACT_SQL, {"vector": vector, "user_id": user_id, "k": k})
    return _hits(await cursor.fetchall())


async def dense_index(conn: Connection, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
    """Approximate top-k through the HNSW index. Opens its own transaction for the SET LOCALs."""
    settings = {
        "ef_search": str(min(max(HNSW_EF_SEARCH, k), HNSW_EF_SEARCH_LIMIT)),
        "max_scan_tuples": str(HNSW_MAX_SCAN_TUPLES),
    }
    async with conn.transaction():
        await conn.execute(_HNSW_SETTINGS_SQL, settings)
        cursor = await conn.execute(_HNSW_SQL, {"vector": vector, "user_id": user_id, "k": k})
        rows = await cursor.fetchall()
    return _hits(rows)


def websearch_query(terms: Sequence[str]) -> str:
    """`"a" OR "b"`: each term quoted, so a stray `-` or `or` is a word, not an operator."""
    # A quote would end the phrase early, and PostgreSQL text cannot hold NUL.
    words = [term.replace('"', " ").replace("\x00", " ").strip() for term in terms]
    return " OR ".join(f'"{word}"' for word in words if word)


async def lexical(conn: Connection, user_id: str, terms: Sequence[str], k: int) -> list[MemoryHit]:
    """Rows matching any term, best BM25 first. websearch_to_tsquery never fails on syntax."""
    query = websearch_query(terms)
    if not query:
        return []
    words = " ".join(term.replace("\x00", " ") for term in terms)
    params = {"query": query, "words": words, "user_id": user_id, "k": k}
    cursor = await conn.execute(_LEXICAL_SQL, params)
    return _hits(await cursor.fetchall())


# One round trip: the person's limit, then every term's count, each stopping past the limit.
_RARE_TERMS_SQL = f"""
WITH lim AS (
    SELECT greatest(%(floor)s, floor(%(share)s * memory_count)::int) AS most
    FROM users WHERE id = %(user_id)s
)
SELECT q.position FROM lim, unnest(%(queries)s::text[]) WITH ORDINALITY AS q(query, position)
WHERE (
    SELECT count(*) FROM (
        SELECT 1 FROM memories
        WHERE user_id = %(user_id)s AND tsv @@ websearch_to_tsquery('english', q.query)
          AND {recallable()}
        LIMIT lim.most + 1
    ) AS found
) BETWEEN 1 AND lim.most
ORDER BY q.position
"""


async def rare_terms(
    conn: Connection, user_id: str, terms: Sequence[str], *, share: float, floor: int
) -> list[str]:
    """Terms found in at least one and at most max(floor, share × memory count) of the user's
    memories, in input order."""
    asked = [(term, websearch_query([term])) for term in terms]
    asked = [(term, query) for term, query in asked if query]
    if not asked:
        return []
    params = {
        "user_id": user_id,
        "queries": [query for _, query in asked],
        "share": share,
        "floor": floor,
    }
    rows = await (await conn.execute(_RARE_TERMS_SQL, params)).fetchall()
    return [asked[int(row["position"]) - 1][0] for row in rows]


def _hits(rows: list[DictRow]) -> list[MemoryHit]:
    return [MemoryHit(memory=memory_from_row(row, POSTGRES), score=float(row["score"])) for row in rows]
