"""What the SQLite schema stores its own way, for the shared converters in `rows`, and back.

SQLite keeps times as epoch seconds (REAL), booleans as 0/1, JSON and id lists as TEXT, and vectors
as float32 BLOBs.
"""

from __future__ import annotations

from typing import Any

from bot.store.sql.rows import Dialect, dump_json, from_epoch, load_json, to_epoch, vector_to_blob

SQLITE = Dialect(
    mark="?",
    moment_param=to_epoch,
    moment=from_epoch,
    json_object=load_json,
    id_list=lambda text: load_json(text) or (),
    json_param=dump_json,
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
