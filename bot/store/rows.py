"""Conversions between stored columns and the core's value types, shared by both stores."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import numpy as np

from bot.core.models import JSONObject, Vector


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
