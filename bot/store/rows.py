"""Conversions between stored columns and the core's value types, shared by both stores."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime, timedelta
from typing import Any, get_args

import numpy as np

from bot.core.models import RECALLABLE, DayStats, JSONObject, MemoryStatus, Revision, Vector

_STATUSES = frozenset(get_args(MemoryStatus))
# Plain literals, not parameters: the planner sees a fixed filter it can use with an index.
_RECALLABLE_LIST = ", ".join(f"'{status}'" for status in sorted(RECALLABLE))


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
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


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
    """The SQL condition (same in both dialects) that keeps only memories search may return."""
    return f"{column} IN ({_RECALLABLE_LIST})"


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


def day_stats(window: list[date], rows: list[tuple[Any, ...]]) -> list[DayStats]:
    """Fold (kind, day, count, extra) rows, kind t(urns: extra = users) / m(emories) / f(eedback:
    extra = mean value), into one DayStats per day of the window."""
    found: dict[tuple[str, date], tuple[int, Any]] = {}
    for kind, day, count, extra in rows:
        key_day = day if isinstance(day, date) else date.fromisoformat(str(day))
        found[(kind, key_day)] = (int(count), extra)
    stats = []
    for day in window:
        turns, users = found.get(("t", day), (0, 0))
        memories, _ = found.get(("m", day), (0, None))
        reactions, reward = found.get(("f", day), (0, None))
        mean = None if reward is None else float(reward)
        stats.append(DayStats(day, int(users or 0), turns, memories, reactions, mean))
    return stats
