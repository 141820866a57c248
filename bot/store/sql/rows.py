"""Conversions between stored columns and the core's value types, shared by both stores.

Rows are read by column name (`sqlite3.Row`, psycopg's `dict_row`), so one converter serves both
schemas whatever their column order. What the dialects store differently (times, JSON, id lists,
the parameter mark) is a `Dialect`; each store module has one (sqlite_rows.SQLITE, pg_rows.POSTGRES).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol, get_args

import numpy as np

from bot.core.memory.kinds import NOT_EVIDENCE
from bot.core.models import (
    RECALLABLE,
    DayStats,
    JSONObject,
    Memory,
    MemoryStatus,
    NewTurn,
    Revision,
    Turn,
    Vector,
)
from bot.core.text import storable_json

_STATUSES = frozenset(get_args(MemoryStatus))
# Plain literals, not parameters: the planner sees a fixed filter it can use with an index.
_RECALLABLE_LIST = ", ".join(f"'{status}'" for status in sorted(RECALLABLE))
_NOT_EVIDENCE_LIST = ", ".join(f"'{kind}'" for kind in sorted(NOT_EVIDENCE))


class NamedRow(Protocol):
    """A row read by column name: a `sqlite3.Row`, or the dict of psycopg's `dict_row`."""

    def __getitem__(self, column: str, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one schema stores what the models hold: the only part of a row that differs."""

    mark: str  # the driver's parameter placeholder
    moment_param: Callable[[datetime], Any]  # a time, as a parameter
    moment: Callable[[Any], datetime]  # a time column, as an aware UTC datetime
    json_object: Callable[[Any], JSONObject]  # a JSON column (TEXT or JSONB)
    id_list: Callable[[Any], Sequence[int]]  # an id list column (JSON TEXT or BIGINT[])
    json_param: Callable[[Any], Any]  # a JSON object or list, as a parameter (TEXT or JSONB)

    def sql(self, template: str) -> str:
        """`template`, written with `?` for each parameter, in this driver's placeholders."""
        if "%" in template:  # psycopg would read a literal % as the start of a placeholder
            raise ValueError("shared SQL must not contain '%'")
        return template.replace("?", self.mark)


# Both schemas name these columns alike; select lists come from here, so rows read by name.
MEMORY_COLUMNS = (
    "id",
    "user_id",
    "kind",
    "text",
    "speaker",
    "created_at",
    "meta",
    "embedding_model",
    "source_turn_id",
    "status",
    "superseded_by",
    "verification",
    "weight",
    "pinned",
    "updated_at",
)
TURN_COLUMNS = (
    "id",
    "memory_id",
    "user_id",
    "chat_id",
    "role",
    "text",
    "created_at",
    "used_memory_ids",
    "reply_to",
)


def select_list(columns: Sequence[str], table: str) -> str:
    """`t.a, t.b`: columns of one table alias, each named as itself in the result."""
    return ", ".join(f"{table}.{column}" for column in columns)


def memory_from_row(row: NamedRow, dialect: Dialect) -> Memory:
    """A memory from a row that holds MEMORY_COLUMNS (and perhaps more)."""
    updated_at = row["updated_at"]
    return Memory(
        id=row["id"],
        user_id=row["user_id"],
        kind=row["kind"],
        text=row["text"],
        speaker=row["speaker"],
        created_at=dialect.moment(row["created_at"]),
        embedding_model=row["embedding_model"],
        meta=dialect.json_object(row["meta"]),
        source_turn_id=row["source_turn_id"],
        status=row["status"],
        superseded_by=row["superseded_by"],
        verification=float(row["verification"]),
        weight=float(row["weight"]),
        pinned=bool(row["pinned"]),
        updated_at=None if updated_at is None else dialect.moment(updated_at),
    )


def turn_from_row(row: NamedRow, dialect: Dialect) -> Turn:
    """A turn from a row that holds TURN_COLUMNS."""
    return Turn(
        id=row["id"],
        memory_id=row["memory_id"],
        user_id=row["user_id"],
        chat_id=row["chat_id"],
        role=row["role"],
        text=row["text"],
        created_at=dialect.moment(row["created_at"]),
        used_memory_ids=tuple(dialect.id_list(row["used_memory_ids"])),
        reply_to=row["reply_to"],
    )


def stored_turn(turn: NewTurn, turn_id: int, memory_id: int, created_at: datetime) -> Turn:
    """What `turn` reads back as once stored under these ids, at `created_at` as the store keeps it."""
    return Turn(
        id=turn_id,
        memory_id=memory_id,
        user_id=turn.user_id,
        chat_id=turn.chat_id,
        role=turn.role,
        text=turn.text,
        created_at=created_at,
        used_memory_ids=tuple(turn.used_memory_ids),
        reply_to=turn.reply_to,
    )


def user_tag(user_id: str) -> str:
    """A token that stands for one user in a full-text index: no user id ever needs escaping."""
    return "u" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]


def to_epoch(moment: datetime) -> float:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def dump_json(value: JSONObject | list[Any]) -> str:
    return json.dumps(storable_json(value), ensure_ascii=False, separators=(",", ":"))


def load_json(text: str | None) -> Any:
    return json.loads(text) if text else {}


def vector_to_blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def blob_to_matrix(blobs: list[bytes], dim: int) -> Vector:
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)


def unit(vector: Vector) -> Vector:
    vec = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


def recallable(column: str = "status") -> str:
    """The SQL condition (same in both dialects) that keeps only memories search may return
    (`Memory.recallable`): a recallable status, and a kind that is evidence about the person.
    `column` is the status column as the query names it ("status", "m.status"); the kind column
    of the same table is checked beside it."""
    kind = column.removesuffix("status") + "kind"
    return f"{column} IN ({_RECALLABLE_LIST}) AND {kind} NOT IN ({_NOT_EVIDENCE_LIST})"


def revision_changes(revision: Revision) -> dict[str, Any]:
    """The columns a revision sets, with their values as the core gives them (each store converts
    times, vectors, JSON and booleans). Column names come from here only, never from a caller.

    Raises ValueError for a new text without its embedding, or a status no memory can have.
    """
    if revision.text is not None and revision.embedding is None:
        raise ValueError("a revised text needs its new embedding, or search would find the old words' vector")
    if revision.status is not None and revision.status not in _STATUSES:
        raise ValueError(f"unknown memory status {revision.status!r}")
    changes: dict[str, Any] = {
        "text": revision.text,
        # Unit length, as every stored vector is: cosine similarity is then a dot product.
        "embedding": None if revision.embedding is None else unit(revision.embedding),
        "kind": revision.kind,
        "status": revision.status,
        "superseded_by": revision.superseded_by,
        "verification": revision.verification,
        "weight": revision.weight,
        "pinned": revision.pinned,
        "meta": revision.meta,
        "updated_at": revision.updated_at,
    }
    return {column: value for column, value in changes.items() if value is not None}


def activity_window(days: int, today: date | None = None) -> list[date]:
    """The `days` UTC days that end today, oldest first."""
    last = today or datetime.now(UTC).date()
    return [last - timedelta(days=back) for back in range(max(days, 0) - 1, -1, -1)]


def day_stats(window: list[date], rows: Iterable[NamedRow]) -> list[DayStats]:
    """Fold rows of (kind, day, n, extra), kind t(urns: extra = users) / m(emories) / f(eedback:
    extra = mean value), into one DayStats per day of the window."""
    found: dict[tuple[str, date], tuple[int, Any]] = {}
    for row in rows:
        day = row["day"]
        key_day = day if isinstance(day, date) else date.fromisoformat(str(day))
        found[(row["kind"], key_day)] = (int(row["n"]), row["extra"])
    stats = []
    for day in window:
        turns, users = found.get(("t", day), (0, 0))
        memories, _ = found.get(("m", day), (0, None))
        reactions, reward = found.get(("f", day), (0, None))
        mean = None if reward is None else float(reward)
        stats.append(DayStats(day, int(users or 0), turns, memories, reactions, mean))
    return stats
