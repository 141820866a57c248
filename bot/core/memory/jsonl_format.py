"""The JSONL memory format that `kindred memory import` reads and `export` writes.

One JSON object per line: `text` (required), `speaker`, `timestamp` (ISO 8601) and `meta`
(any JSON object, kept untouched). Other keys are ignored, so an export imports as it is.

A line with a `record` key is not a memory: /export writes the person's settings and usage so
(person_records.py). An import counts them by their `record` and keeps them aside, without an
error: it restores memories only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, BinaryIO

from bot.core.errors import InvalidInput
from bot.core.models import JSONObject, Memory
from bot.core.text import clean_message, storable

MAX_TEXT_CHARS = 100_000
# The most an import reads and an export writes (Telegram Desktop's exports have the same bound,
# telegram_export.MAX_EXPORT_BYTES): what `kindred memory export` wrote imports back.
MAX_FILE_BYTES = 256 * 2**20
# The key that marks a line that is not a memory, and how its kind may be named: a kind this
# version does not know (a later export's) is kept aside too, counted under its own name.
RECORD_KEY = "record"
RECORD_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
# Distinct names counted apart; past them (a hostile file), the rest count as "other".
MAX_RECORD_NAMES = 16


@dataclass(frozen=True, slots=True)
class ImportItem:
    line: int
    text: str
    speaker: str | None
    timestamp: datetime | None
    meta: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ParsedFile:
    items: list[ImportItem]
    errors: list[LineError]
    blank_lines: int
    # Lines that are not memories (a `record` key), counted by their kind: kept aside.
    aside: dict[str, int] = field(default_factory=dict)

    def aside_words(self) -> str:
        """What the import's summary line adds (`, kept aside 2 setting and 14 usage lines (…)`);
        empty when there were none."""
        if not self.aside:
            return ""
        counts = [f"{count} {name}" for name, count in sorted(self.aside.items())]
        listed = ", ".join(counts[:-1]) + " and " + counts[-1] if len(counts) > 1 else counts[0]
        return f", kept aside {listed} lines (not memories: an import restores memories only)"


def parse_lines(lines: Iterable[bytes]) -> ParsedFile:
    """Validate every line. Blank lines are skipped, and lines that are not memories counted
    aside; each bad line is reported by number."""
    items: list[ImportItem] = []
    errors: list[LineError] = []
    aside: dict[str, int] = {}
    blank = 0
    for number, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            errors.append(LineError(number, f"not valid UTF-8 (byte {exc.start})"))
            continue
        if not text.strip():
            blank += 1
            continue
        try:
            value = json_object(text)
            kind = record_kind(value)
            if kind is None:
                items.append(import_item(number, value))
            else:
                name = kind if kind in aside or len(aside) < MAX_RECORD_NAMES else "other"
                aside[name] = aside.get(name, 0) + 1
        except InvalidInput as exc:
            errors.append(LineError(number, str(exc)))
    return ParsedFile(items, errors, blank, aside)


def record_kind(value: dict[str, Any]) -> str | None:
    """The kind of a line that is not a memory (its `record`), or None for a memory line. A kind
    named unlike any Kindred writes counts as "other"; a `record` that is not a string is an error."""
    kind = value.get(RECORD_KEY)
    if kind is None:
        return None
    if not isinstance(kind, str):
        raise InvalidInput("`record` must be a string (the kind of a line that is not a memory)")
    return kind if RECORD_NAME.fullmatch(kind) else "other"


def bounded_lines(handle: BinaryIO, name: str, max_bytes: int = MAX_FILE_BYTES) -> Iterator[bytes]:
    """The lines of a file, or InvalidInput once more than `max_bytes` were read: a file (or pipe)
    that is too big is refused while it is read, before anything is stored. One line is never read
    past the bound either, so a file with no newline cannot fill the memory."""
    read = 0
    while line := handle.readline(max_bytes - read + 1):
        read += len(line)
        if read > max_bytes:
            raise InvalidInput(too_big(name, max_bytes))
        yield line


def too_big(name: str, max_bytes: int) -> str:
    return f"{name} is larger than {size_words(max_bytes)}, the most one import reads; split it in parts"


def size_words(size: int) -> str:
    """A size as people read it: "256 MiB", "16 KiB", "900 bytes"."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:,.3g} {unit}"
    return f"{size} bytes"


def parse_line(number: int, text: str) -> ImportItem:
    return import_item(number, json_object(text))


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"expected a JSON object, got {type(value).__name__}")
    return value


def import_item(number: int, value: dict[str, Any]) -> ImportItem:
    body = value.get("text")
    if not isinstance(body, str):
        raise InvalidInput("`text` is required and must be a string")
    try:
        body = clean_message(body, MAX_TEXT_CHARS)
    except InvalidInput:
        raise InvalidInput(f"`text` must be non-empty and at most {MAX_TEXT_CHARS:,} characters") from None
    speaker = value.get("speaker")
    if speaker is not None and not isinstance(speaker, str):
        raise InvalidInput("`speaker` must be a string")
    if speaker is not None:
        speaker = storable(speaker).strip() or None
    meta = value.get("meta", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InvalidInput("`meta` must be a JSON object")
    return ImportItem(number, body, speaker, _timestamp(value.get("timestamp")), meta)


def _timestamp(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput("`timestamp` must be an ISO 8601 string")
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"`timestamp` is not ISO 8601: {value[:40]!r}") from None
    found = as_utc(moment)
    if found is None:
        raise InvalidInput(f"`timestamp` is out of range: {value[:40]!r}")
    return found


def as_utc(moment: datetime) -> datetime | None:
    """`moment` in UTC (a time without a zone is taken as UTC, the zone every export writes), or
    None where UTC has no such time: 0001-01-01T00:00+14:00 falls in year 0."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return None


def export_record(memory: Memory) -> dict[str, Any]:
    return {
        "text": memory.text,
        "speaker": memory.speaker,
        "timestamp": memory.created_at.isoformat(),
        "meta": dict(memory.meta),
    }


def listing_record(memory: Memory) -> dict[str, Any]:
    """An export record with the memory's id, kind and curation state: what `memory list --json`
    and /export give. Import reads only the export keys, so the extra ones round-trip harmlessly."""
    return {
        "id": memory.id,
        "kind": memory.kind,
        **export_record(memory),
        "status": memory.status,
        "superseded_by": memory.superseded_by,
        "verification": memory.verification,
        "weight": memory.weight,
        "pinned": memory.pinned,
    }
