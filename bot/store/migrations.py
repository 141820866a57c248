"""Versioned SQL migrations from `schema/<dialect>/NNNN_name.sql`, applied in order once each.

Both dialects share one numbering: the same number and name are the same change on each, and a
change one dialect needs no SQL for ships there as a file of comments only (a no-op, recorded as
applied like any other). A database records each step as (version, name); the name, not the number,
says which change it was, so a database numbered before the dialects were reconciled is renumbered
on its next start (`renumbering`) and nothing in it runs twice or is passed over.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Literal

Dialect = Literal["sqlite", "postgres"]
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

# Every dialect keeps the same bookkeeping table, so `kindred migrate` reads alike on both.
VERSION_TABLE_DDL = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def available(dialect: Dialect) -> list[Migration]:
    """All migrations shipped for `dialect`, lowest version first."""
    folder = resources.files("kindred_schema").joinpath(dialect)
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration versions in schema/{dialect}: {versions}")
    names = [m.name for m in found]
    if len(set(names)) != len(names):  # a name identifies a recorded step: see renumbering
        raise RuntimeError(f"duplicate migration names in schema/{dialect}: {names}")
    return found


def pending(dialect: Dialect, applied: set[int]) -> list[Migration]:
    return [m for m in available(dialect) if m.version not in applied]


def renumbering(dialect: Dialect, recorded: Iterable[tuple[int, str]]) -> dict[int, int]:
    """Recorded version -> shipped version, for each recorded step whose name ships under another
    number now. Until the two dialects shared one numbering, each counted on its own (PostgreSQL's
    0007 was `learning`, SQLite's `vector_version`). A name that no shipped file has (a newer
    Kindred's step) keeps its number."""
    shipped = {m.name: m.version for m in available(dialect)}
    return {version: shipped[name] for version, name in recorded if shipped.get(name, version) != version}


def current_versions(dialect: Dialect, recorded: Iterable[tuple[int, str]]) -> list[int]:
    """The recorded steps' versions in today's numbering, lowest first."""
    rows = list(recorded)
    moved = renumbering(dialect, rows)
    return sorted(moved.get(version, version) for version, _ in rows)


def renumber_updates(moved: dict[int, int]) -> list[tuple[int, int]]:
    """(new, old) pairs for `UPDATE schema_version SET version = new WHERE version = old`, in order.
    Every row goes through its negated target first, so that no update meets a version still held
    by a row that has yet to move (version is the primary key)."""
    return [(-new, old) for old, new in moved.items()] + [(new, -new) for new in moved.values()]
