"""Versioned SQL migrations from `schema/<dialect>/NNNN_name.sql`, applied in order once each."""

from __future__ import annotations

import re
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
    return found


def pending(dialect: Dialect, applied: set[int]) -> list[Migration]:
    return [m for m in available(dialect) if m.version not in applied]
