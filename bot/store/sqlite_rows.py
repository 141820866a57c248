"""Memory rows of the SQLite schema as Kindred's models: the select list and conversions, both ways.

SQLite keeps times as epoch seconds (REAL), booleans as 0/1, JSON as TEXT and vectors as float32
BLOBs; `rows` has the conversions, this module applies them to whole memories.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from bot.core.models import Memory
from bot.store.rows import dump_json, from_epoch, load_json, to_epoch, vector_to_blob

_COLUMNS = (
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
# Select lists, in the order `memory_from_row` reads them; the second for queries that join.
MEMORY_COLUMNS = ", ".join(_COLUMNS)
M_MEMORY_COLUMNS = ", ".join(f"m.{column}" for column in _COLUMNS)


def memory_from_row(row: sqlite3.Row | tuple[Any, ...]) -> Memory:
    return Memory(
        id=row[0],
        user_id=row[1],
        kind=row[2],
        text=row[3],
        speaker=row[4],
        created_at=from_epoch(row[5]),
        meta=load_json(row[6]),
        embedding_model=row[7],
        source_turn_id=row[8],
        status=row[9],
        superseded_by=row[10],
        verification=float(row[11]),
        weight=float(row[12]),
        pinned=bool(row[13]),
        updated_at=None if row[14] is None else from_epoch(row[14]),
    )


def stored_value(column: str, value: Any) -> Any:
    """A revision's value (see rows.revision_changes) as this schema stores it in `column`."""
    if column == "embedding":
        return vector_to_blob(value)
    if column == "meta":
        return dump_json(value)
    if column == "updated_at":
        return to_epoch(value)
    if column == "pinned":
        return int(value)
    return value
