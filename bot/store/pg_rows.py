"""Rows of the PostgreSQL schema as Kindred's models: column lists and conversions, both ways."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, cast

from psycopg.types.json import Jsonb

from bot.core.models import Memory, Turn

# Select lists, in the order the converters below read them.
MEMORY_COLUMNS = (
    "m.id, m.user_id, m.kind, m.text, m.speaker, m.created_at, m.embedding_model, m.meta, m.source_turn_id,"
    " m.status, m.superseded_by, m.verification, m.weight, m.pinned, m.updated_at"
)
TURN_COLUMNS = (
    "t.id, t.memory_id, t.user_id, t.chat_id, t.role, t.text, t.created_at, t.used_memory_ids, t.reply_to"
)

Row = tuple[Any, ...]


def to_utc(moment: datetime) -> datetime:
    """An aware UTC datetime. A naive one is taken to be UTC already, as the SQLite store does."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def memory_from_row(row: Row) -> Memory:
    return Memory(
        id=row[0],
        user_id=row[1],
        kind=row[2],
        text=row[3],
        speaker=row[4],
        created_at=to_utc(row[5]),
        embedding_model=row[6],
        meta=row[7],
        source_turn_id=row[8],
        status=row[9],
        superseded_by=row[10],
        verification=float(row[11]),
        weight=float(row[12]),
        pinned=bool(row[13]),
        updated_at=None if row[14] is None else to_utc(row[14]),
    )


def stored_value(column: str, value: Any) -> Any:
    """A revision's value (see rows.revision_changes) as psycopg must pass it for `column`."""
    if column == "meta":
        return Jsonb(dict(value))
    if column == "updated_at":
        return to_utc(value)
    return value  # vectors go through pgvector's adapter, booleans and numbers as they are


def turn_from_row(row: Row) -> Turn:
    return Turn(
        id=row[0],
        memory_id=row[1],
        user_id=row[2],
        chat_id=row[3],
        role=cast(Literal["user", "assistant"], row[4]),
        text=row[5],
        created_at=to_utc(row[6]),
        used_memory_ids=tuple(row[7]),
        reply_to=row[8],
    )
