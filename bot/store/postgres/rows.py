"""What the PostgreSQL schema stores its own way, for the shared converters in `rows`, and back.

Times are timestamptz, JSON is JSONB (psycopg decodes it), id lists are BIGINT[], and vectors go
through pgvector's adapter.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb

from bot.core.models import JSONObject
from bot.core.text import storable_json
from bot.store.sql.rows import Dialect


def to_utc(moment: datetime) -> datetime:
    """An aware UTC datetime. A naive one is taken to be UTC already, as the SQLite store does."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _decoded(value: JSONObject) -> JSONObject:
    return value  # psycopg has already parsed the JSONB


def jsonb(value: JSONObject | list[Any]) -> Jsonb:
    return Jsonb(storable_json(list(value) if isinstance(value, list) else dict(value)))


POSTGRES = Dialect(
    mark="%s",
    moment_param=to_utc,
    moment=to_utc,
    json_object=_decoded,
    id_list=tuple,
    json_param=jsonb,
)


def stored_value(column: str, value: Any) -> Any:
    """A revision's value (see rows.revision_changes) as psycopg must pass it for `column`."""
    if column == "meta":
        return jsonb(value)
    if column == "updated_at":
        return to_utc(value)
    return value  # vectors go through pgvector's adapter, booleans and numbers as they are
