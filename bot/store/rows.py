"""Conversions between stored columns and the core's value types, shared by both stores."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np

from bot.core.models import DayStats, JSONObject, Vector


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
