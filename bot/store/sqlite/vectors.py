"""Each big person's recallable vectors, kept in memory as one matrix, on SQLite.

Exact dense search reads every vector of the person and ranks them with numpy. Reading 20,000
blobs costs ~80 ms; multiplying the matrix costs ~2. So the matrix of a person with at least
`MIN_CACHED_ROWS` memories is kept, and each search first asks the database, in one indexed
read, whether it is still right:
- `users.vector_version` moves, by trigger (schema 0007), whenever a memory of the person is
  deleted or changes its vector, status or kind: the matrix is read again;
- so does the person's smallest memory id: /forget all deletes the `users` row, and a person
  who comes back starts again from version 0 with only new, larger ids;
- otherwise rows above the largest id held are new ones (ids only grow): those are appended.
Both come from the database, so a write made by any connection or process is seen by the next
search. Matrices are dropped least recently used beyond `MAX_CACHED_VECTORS` rows in all.

The product of a big matrix and the query runs on one BLAS thread. OpenBLAS would otherwise split
it over every core, and on cores that are busy with anything else (the embedder, the event loop,
another process) its threads wait on each other: 20,000 × 384 took 25 ms p50 that way here, and
1.1 ms on one thread.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from bot.core.models import Vector
from bot.store.sql.rows import blob_to_matrix, recallable
from bot.store.sqlite.db import SqliteDatabase

# Below this a person's rows read in about a millisecond: not worth the memory.
MIN_CACHED_ROWS = 2000
# ~150 MB of float32 at 384 dimensions, over every cached person together.
MAX_CACHED_VECTORS = 100_000
# Products this small run on one thread anyway; above it, BLAS is held to one.
ONE_THREAD_FROM_ROWS = 1000
_GROWTH = 1.5

_STATE_SQL = """
SELECT u.vector_version AS version,
       (SELECT min(m.id) FROM memories m WHERE m.user_id = u.id) AS min_id,
       (SELECT max(m.id) FROM memories m WHERE m.user_id = u.id) AS max_id
FROM users u WHERE u.id = ?
"""
_ROWS_SQL = f"SELECT id, embedding FROM memories WHERE user_id = ? AND id > ? AND {recallable()} ORDER BY id"


@dataclass(slots=True)
class _Matrix:
    version: tuple[int, int]  # (users.vector_version, the smallest memory id)
    max_id: int  # the largest id read, recallable or not: rows above it are new
    size: int
    ids: np.ndarray  # int64, the first `size` are in use
    rows: np.ndarray  # float32 (capacity, dim)

    def append(self, ids: np.ndarray, rows: np.ndarray) -> None:
        needed = self.size + len(ids)
        if needed > len(self.ids):
            capacity = max(needed, int(len(self.ids) * _GROWTH))
            self.ids = np.resize(self.ids, capacity)
            grown = np.empty((capacity, self.rows.shape[1]), dtype=np.float32)
            grown[: self.size] = self.rows[: self.size]
            self.rows = grown
        self.ids[self.size : needed] = ids
        self.rows[self.size : needed] = rows
        self.size = needed


class VectorCache:
    """One person's recallable (ids, vectors), from memory when the database says it is current."""

    def __init__(
        self,
        db: SqliteDatabase,
        dim: int,
        *,
        min_rows: int = MIN_CACHED_ROWS,
        max_vectors: int = MAX_CACHED_VECTORS,
    ) -> None:
        self._db = db
        self._dim = dim
        self._min_rows = min_rows
        self._max_vectors = max_vectors
        self._people: OrderedDict[str, _Matrix] = OrderedDict()
        self._blas: Any = None  # threadpoolctl's controller, made on the first big product

    async def similarities(self, user_id: str, query: Vector) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine similarities to the unit `query`) of the person's recallable memories."""
        ids, rows = await self.vectors(user_id)
        if len(ids) < ONE_THREAD_FROM_ROWS:
            return ids, rows @ query
        if self._blas is None:
            from threadpoolctl import ThreadpoolController

            self._blas = ThreadpoolController()
        with self._blas.limit(limits=1, user_api="blas"):
            return ids, rows @ query

    async def vectors(self, user_id: str) -> tuple[np.ndarray, np.ndarray]:
        """(ids, unit rows) of every recallable memory of the person, in id order. Read-only views."""
        state = await self._db.read(_STATE_SQL, (user_id,))
        if not state or state[0]["max_id"] is None:
            self._people.pop(user_id, None)
            return np.zeros(0, dtype=np.int64), np.zeros((0, self._dim), dtype=np.float32)
        version = (int(state[0]["version"]), int(state[0]["min_id"]))
        max_id = int(state[0]["max_id"])
        held = self._people.get(user_id)
        if held is None or held.version != version:
            held = self._empty(version)
        if max_id > held.max_id:
            await self._read_above(user_id, held, max_id)
        self._keep(user_id, held)
        return held.ids[: held.size], held.rows[: held.size]

    async def _read_above(self, user_id: str, held: _Matrix, max_id: int) -> None:
        rows = await self._db.read(_ROWS_SQL, (user_id, held.max_id))
        if rows:
            ids = np.fromiter((int(row["id"]) for row in rows), dtype=np.int64, count=len(rows))
            # A search of the same person that ran meanwhile may have appended some of these.
            fresh = ids > held.max_id
            vectors = blob_to_matrix([row["embedding"] for row in rows], self._dim)
            held.append(ids[fresh], vectors[fresh])
            max_id = max(max_id, int(ids[-1]))  # a row committed after the state was read
        held.max_id = max(held.max_id, max_id)

    def _empty(self, version: tuple[int, int]) -> _Matrix:
        return _Matrix(version, 0, 0, np.zeros(0, dtype=np.int64), np.zeros((0, self._dim), dtype=np.float32))

    def _keep(self, user_id: str, held: _Matrix) -> None:
        if held.size < self._min_rows:
            self._people.pop(user_id, None)
            return
        self._people[user_id] = held
        self._people.move_to_end(user_id)
        total = sum(m.size for m in self._people.values())
        while total > self._max_vectors and len(self._people) > 1:
            _, dropped = self._people.popitem(last=False)
            total -= dropped.size
