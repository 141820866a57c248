"""Telegram Desktop's chat export (`result.json`, "Export chat history" → JSON) as import items.

Two shapes are read: one chat's export (`{"name", "type", "messages": [...]}`), and a whole
account's (`{"personal_information": {"user_id"}, "chats": {"list": [chat, ...]}}`).

Whose words are imported: the person's own messages, and only those unless `others` is asked
for. The person is `me`: a `from_id` ("user123456"), the bare number, or the name shown in
`from`. An account export names its owner (`personal_information.user_id`), so `me` may be left
out there; a single chat's export does not, so `me` is then required and the error lists the
senders found. The person's messages are stored with the speaker "user", as their own chat turns
are; others' (with `others`) under their name in `from`.

Nothing is imported from a file that is not an export (invalid JSON, another shape: one
`InvalidInput` line). Within an export, what cannot become a memory is skipped and counted by
reason: service messages (joins, calls, pins), media without text, messages without a date,
texts too long, malformed entries, and others' messages. Dates: `date_unixtime` (UTC) when
present, else `date`, which Telegram writes in the exporting machine's local time without a
zone; it is read as UTC, the rule of every import here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.core.errors import InvalidInput
from bot.core.memory.jsonl_format import MAX_TEXT_CHARS, ImportItem, as_utc
from bot.core.text import clean_message, storable

OWN_SPEAKER = "user"
SOURCE = "telegram"
# Reasons a message is skipped, in the order a summary names them.
SKIP_REASONS = ("service", "no_text", "no_date", "too_long", "malformed", "others")
# json.loads needs several times the file's size in memory; an account's whole history can be
# gigabytes, most of it media references. One chat at a time fits well under this.
MAX_EXPORT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class TelegramImport:
    """What an export yields: the items in file order, and what was skipped, by reason."""

    items: list[ImportItem]
    skipped: Counter[str] = field(default_factory=Counter)
    me: str = ""

    def summary(self) -> str:
        """'3 service, 1 no text' (empty when nothing was skipped)."""
        parts = [f"{self.skipped[r]} {r.replace('_', ' ')}" for r in SKIP_REASONS if self.skipped[r]]
        return ", ".join(parts)


def parse_export(raw: bytes, *, me: str | None = None, others: bool = False) -> TelegramImport:
    """Read an export. Raises InvalidInput (one line) for a file that is not one, or when the
    person cannot be told apart from the others."""
    try:
        value = json.loads(raw.decode("utf-8-sig"))  # Telegram writes UTF-8; a BOM is tolerated
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not a Telegram export: not valid UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"not a Telegram export: invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    chats, owner = _chats(value)
    person = _person(me, owner, chats)
    items: list[ImportItem] = []
    skipped: Counter[str] = Counter()
    number = 0  # the message's place in the file, counted over every chat
    for chat in chats:
        for message in chat["messages"]:
            number += 1
            item, reason = _item(number, chat, message, person, others)
            if item is None:
                skipped[reason] += 1
            else:
                items.append(item)
    return TelegramImport(items, skipped, person)


def _chats(value: Any) -> tuple[list[dict[str, Any]], str | None]:
    """The chats of either shape, and the account owner's from_id when the export names one."""
    if not isinstance(value, dict):
        raise InvalidInput(f"not a Telegram export: expected a JSON object, got {type(value).__name__}")
    if isinstance(value.get("messages"), list):
        return [value], None
    listed = value.get("chats", {}).get("list") if isinstance(value.get("chats"), dict) else None
    if not isinstance(listed, list):
        raise InvalidInput("not a Telegram export: no `messages` list and no `chats.list`")
    chats = [c for c in listed if isinstance(c, dict) and isinstance(c.get("messages"), list)]
    info = value.get("personal_information")
    user_id = info.get("user_id") if isinstance(info, dict) else None
    return chats, (f"user{user_id}" if isinstance(user_id, int | str) and str(user_id) else None)


def _person(me: str | None, owner: str | None, chats: list[dict[str, Any]]) -> str:
    """The person's from_id: from `me` (an id, a number or a name), else the account's owner."""
    senders: Counter[tuple[str, str]] = Counter()
    for chat in chats:
        for message in chat["messages"]:
            if isinstance(message, dict) and message.get("type") == "message":
                senders[(str(message.get("from_id", "")), str(message.get("from") or ""))] += 1
    if me is None or not me.strip():
        if owner is not None:
            return owner
        top = senders.most_common(5)
        found = ", ".join(f"{_shown(name) or '?'} ({_shown(sender_id)}, {n})" for (sender_id, name), n in top)
        raise InvalidInput(f"name yourself with --me (your from_id or name); senders: {found or 'none'}")
    wanted = me.strip()
    for sender_id, name in senders:
        if wanted in {sender_id, sender_id.removeprefix("user"), name}:
            return sender_id
    if wanted.startswith("user") or wanted.isdigit():
        return wanted if wanted.startswith("user") else f"user{wanted}"
    raise InvalidInput(f"--me {wanted!r} sent no message in this export")


def _shown(name: str) -> str:
    """A sender's name as one line can show it: no newline, control or direction override (a
    right-to-left override would reverse the rest of the message)."""
    return "".join(char for char in name if char.isprintable())[:40]


def _item(
    number: int, chat: dict[str, Any], message: Any, person: str, others: bool
) -> tuple[ImportItem | None, str]:
    if not isinstance(message, dict):
        return None, "malformed"
    if message.get("type") != "message":
        return None, "service"
    own = str(message.get("from_id", "")) == person
    if not own and not others:
        return None, "others"
    text = flatten_text(message.get("text"))
    if text is None:
        return None, "malformed"
    if not text.strip():
        return None, "no_text"  # a photo, sticker, voice message or file without a caption
    if len(text) > MAX_TEXT_CHARS:
        return None, "too_long"
    when = _when(message)
    if when is None:
        return None, "no_date"
    try:
        body = clean_message(text, MAX_TEXT_CHARS)
    except InvalidInput:
        return None, "no_text"  # nothing left once control characters are cleaned away
    # A name is stored as it came, less what neither database can hold (core/text.py: storable).
    speaker = (
        OWN_SPEAKER if own else storable(str(message.get("from") or message.get("from_id") or "unknown"))
    )
    meta = {"source": SOURCE, "chat": str(chat.get("name") or ""), "message_id": message.get("id")}
    return ImportItem(number, body, speaker, when, meta), ""


def flatten_text(text: Any) -> str | None:
    """A message's text: a string, or a list of strings and entities (`{"type", "text"}`) —
    links, bold, mentions, custom emoji — joined in order. None for any other shape."""
    if isinstance(text, str):
        return text
    if not isinstance(text, list):
        return None
    parts: list[str] = []
    for part in text:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
        else:
            return None
    return "".join(parts)


def _when(message: dict[str, Any]) -> datetime | None:
    unix = message.get("date_unixtime")
    try:
        if unix is not None:
            return datetime.fromtimestamp(int(unix), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        pass
    date = message.get("date")
    if not isinstance(date, str):
        return None
    try:
        moment = datetime.fromisoformat(date.strip())
    except ValueError:
        return None
    return as_utc(moment)
