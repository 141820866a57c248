"""What /export carries besides memories ([personal] 4): the person's settings and what they used,
one JSON object a line after the memory lines, each marked by a `record` key that no memory line
has (jsonl_format.RECORD_KEY). `kindred memory import` restores memories only: it counts these
lines and keeps them aside, and an export written before they existed imports as it always did.

One place lists them. A kind of line is one entry in RECORD_KINDS (its name and a reader of one
person's lines); a setting is one reader in SETTINGS. Export, import and forgetting need nothing
more: every table a reader reads must also be in the store's FORGET_PERSON (bot/store/sql), and
docs/memory.md's table of lines gains a row.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace

from bot.core.memory.jsonl_format import RECORD_KEY
from bot.core.memory.operations import all_memories
from bot.core.models import JSONObject, Memory
from bot.core.proactive.models import ProactiveSettings
from bot.core.store import Store

Lines = list[JSONObject]
Reader = Callable[[Store, str], Awaitable[Lines]]


@dataclass(frozen=True, slots=True)
class RecordKind:
    """A kind of line: `name` is its `record` value; `read` gives one person's lines of it."""

    name: str
    read: Reader


async def persona_choices(store: Store, user_id: str) -> Lines:
    """The persona of each of the person's private chats where they picked one. A group's choice
    is the group's, made by its admins: never the person's to export or forget."""
    return [
        {"name": "persona", "chat": chat, "value": persona}
        for chat, persona in await store.personas.chosen_by(user_id)
    ]


async def model_choices(store: Store, user_id: str) -> Lines:
    """The model of each of the person's private chats where they picked one, as for personas."""
    chosen = await store.models.chosen_by(user_id)
    return [{"name": "model", "chat": chat, "value": model} for chat, model in chosen]


async def spoken_replies(store: Store, user_id: str) -> Lines:
    # Off is the default and what "never chose" reads as: only an "on" says anything.
    return [{"name": "spoken_replies", "value": True}] if await store.turns.speaks_replies(user_id) else []


async def training(store: Store, user_id: str) -> Lines:
    consent = await store.learning.training_consent(user_id)
    return [] if consent is None else [{"name": "training", "value": consent}]


async def keep_files(store: Store, user_id: str) -> Lines:
    return [{"name": "keep_files", "value": True}] if await store.turns.keeps_files(user_id) else []


async def proactive(store: Store, user_id: str) -> Lines:
    """Check-ins on or off, the time zone, quiet hours and what the person declined; nothing while
    all are the defaults. Whether they blocked the bot is not a choice of theirs here."""
    chosen = replace(await store.proactive.proactive_settings(user_id), inactive=False)
    if chosen == ProactiveSettings():
        return []
    value: JSONObject = {
        "enabled": chosen.enabled,
        "timezone": chosen.timezone,
        "quiet_start": chosen.quiet_start.isoformat("minutes"),
        "quiet_end": chosen.quiet_end.isoformat("minutes"),
        "disabled": sorted(chosen.disabled),
        "declined": sorted(chosen.declined),
    }
    return [{"name": "proactive", "value": value}]


SETTINGS: tuple[Reader, ...] = (
    persona_choices, model_choices, spoken_replies, training, keep_files, proactive,
)  # fmt: skip


async def settings(store: Store, user_id: str) -> Lines:
    """One line per setting the person chose: `{"name", "value"}`, and `chat` for a chat's."""
    lines: Lines = []
    for read in SETTINGS:
        lines += await read(store, user_id)
    return lines


async def usage(store: Store, user_id: str) -> Lines:
    """One line per use, oldest first; `group`: the group chat it was in (null: a private chat);
    `day`: the person's own day it counted on; `model` and `cost` as the budgets priced it."""
    return [
        {
            "kind": used.kind,
            "at": used.at.isoformat(),
            "day": used.day.isoformat() if used.day else None,
            "tokens_in": used.tokens_in,
            "tokens_out": used.tokens_out,
            "amount": used.amount,
            "group": used.group_id,
            "model": used.model,
            "cost": used.cost,
        }
        for used in await store.usage.records(user_id)
    ]


RECORD_KINDS: tuple[RecordKind, ...] = (RecordKind("setting", settings), RecordKind("usage", usage))


async def person_records(store: Store, user_id: str) -> AsyncIterator[JSONObject]:
    """Every line of every kind for one person, in RECORD_KINDS' order."""
    for kind in RECORD_KINDS:
        for line in await kind.read(store, user_id):
            yield {RECORD_KEY: kind.name, **line}


async def export_lines(
    store: Store, user_id: str, memory_line: Callable[[Memory], JSONObject]
) -> AsyncIterator[JSONObject]:
    """An export, in order: every memory as `memory_line` writes it, then the person's records.
    /export and `kindred memory export` both write this."""
    async for memory in all_memories(store.memories, user_id):
        yield memory_line(memory)
    async for record in person_records(store, user_id):
        yield record


async def export_bytes(
    store: Store, user_id: str, memory_line: Callable[[Memory], JSONObject], max_bytes: int
) -> bytes | None:
    """The export as one JSONL file in memory, or None as soon as it grows past `max_bytes`."""
    lines: list[bytes] = []
    size = 0
    async for line in export_lines(store, user_id, memory_line):
        lines.append(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
        size += len(lines[-1])
        if size > max_bytes:
            return None
    return b"".join(lines)
