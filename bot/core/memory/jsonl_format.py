"""The JSONL memory format that `kindred memory import` reads and `export` writes.

One JSON object per line: `text` (required), `speaker`, `timestamp` (ISO 8601) and `meta`
(any JSON object, kept untouched). Other keys are ignored, so an export imports as it is.
"""

from __future__ import annotations

import json
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


def parse_lines(lines: Iterable[bytes]) -> ParsedFile:
    """Validate every line. Blank lines are skipped; each bad line is reported by number."""
    items: list[ImportItem] = []
    errors: list[LineError] = []
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
            items.append(parse_line(number, text))
        except InvalidInput as exc:
            errors.append(LineError(number, str(exc)))
    return ParsedFile(items, errors, blank)


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
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"expected a JSON object, got {type(value).__name__}")
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
