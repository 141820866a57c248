"""Sends of unknown delivery in bench/soak.py, from both ends: the fake Bot API's own log (which
sends it answered 5xx or never answered, and whether it had stored the message first) and the
store's `delivery_doubts` (what the bot recorded as "delivery unknown", and how that settled).

- A send the fake failed *before* storing it (the 8 s of 500s) never shows; the bot may only
  record it. A reply recorded so is `unknown` until the person asks for it again with the notice's
  button; one not recorded is lost.
- A send the fake failed *after* storing it (`*_after` faults) shows once; the bot recorded it as
  unknown, and it stays so until the person reacts or replies to it.

- A command's answer is no stored turn: one the fake failed before storing it is `unknown` from
  the fake's log alone (the bot only logs it), never lost.
- A reaction on a message the bot never learned (its send failed after delivery) is linked only
  when exactly one reply of unknown delivery waits in that chat; with two waiting it cannot be
  attributed, and is `reactions_unlinked`, not lost (checks.stored).

`unknown` is the rows still unconfirmed at the end (`unknown` or `told`), shown or not, with those
answers and those reactions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from bench.parts.soak.kinds import kind_of, reply_tag
from bench.parts.soak.rows import fetch
from tests.support.telegram_api import AFTER_DELIVERY, Call, FakeTelegramBotApi

UNCONFIRMED = frozenset({"unknown", "told"})
# What the fake answered without storing the message, which the bot takes as maybe delivered
# (bot/adapters/telegram/delivery_rule.py): a 500, or a dropped connection.
FAILED_BEFORE_DELIVERY = frozenset({"server_error", "reset"})
SENDS = frozenset({"sendMessage"})


@dataclass
class Doubts:
    """The bot's `delivery_doubts` rows, each by the chat and the reply (its tag) or ring it holds."""

    replies: dict[tuple[int, str], str] = field(default_factory=dict)  # (chat, tag) → status
    rings: dict[tuple[int, str], str] = field(default_factory=dict)  # (chat, "Reminder: …") → status
    statuses: Counter[str] = field(default_factory=Counter)

    def reply(self, chat: int, tag: str) -> str | None:
        return self.replies.get((chat, tag))

    def ring(self, chat: int, first_line: str) -> str | None:
        return self.rings.get((chat, first_line))

    @property
    def unconfirmed(self) -> int:
        return sum(n for status, n in self.statuses.items() if status in UNCONFIRMED)


async def doubts(place: str) -> Doubts:
    """Read from the store itself (PostgreSQL, or the SQLite file), as the checks read feedback and turns."""
    rows = await fetch(
        place,
        "SELECT d.chat_id, d.status, t.text FROM delivery_doubts d JOIN turns t ON t.id = d.turn_id"
        " WHERE d.platform = %s",
        ("telegram",),
    )
    found = Doubts()
    for chat_id, status, text in rows:
        chat, status, text = int(chat_id), str(status), str(text or "")
        found.statuses[status] += 1
        tag = reply_tag(text)
        if tag is not None:
            found.replies[(chat, tag)] = status
        elif text.startswith("Reminder: "):
            found.rings[(chat, text.splitlines()[0].strip())] = status
    return found


def failed_sends(api: FakeTelegramBotApi) -> dict[int, list[Call]]:
    """Each chat's sends that the fake answered with a failure the bot reads as maybe delivered."""
    out: defaultdict[int, list[Call]] = defaultdict(list)
    for call in api.calls:
        if call.method in SENDS and call.failed in FAILED_BEFORE_DELIVERY | AFTER_DELIVERY:
            out[int(call.params["chat_id"])].append(call)
    return out


def unlearned(api: FakeTelegramBotApi) -> dict[int, set[int]]:
    """Each chat's messages that the fake stored and then failed to confirm: ids the bot never learned."""
    out: defaultdict[int, set[int]] = defaultdict(set)
    for call in api.calls:
        if call.method in SENDS and call.failed in AFTER_DELIVERY and call.message_id is not None:
            out[int(call.params["chat_id"])].add(call.message_id)
    return out


def never_shown(calls: list[Call]) -> Counter[str]:
    """The kinds of bot message these failed sends carried and the fake never stored."""
    before = (c for c in calls if c.failed in FAILED_BEFORE_DELIVERY)
    return Counter(kind_of(str(c.params.get("text", ""))) for c in before)


def report(
    api: FakeTelegramBotApi, found: Doubts, *, resends: int, answers: int, reactions: int
) -> dict[str, object]:
    """`answers`: command answers never shown, of unknown delivery; `reactions`: those unlinked."""
    calls = [c for chat in failed_sends(api).values() for c in chat]
    after = Counter(str(c.failed) for c in calls if c.failed in AFTER_DELIVERY)
    return {
        "unknown": found.unconfirmed + answers + reactions,
        "replies_unconfirmed": found.unconfirmed,
        "command_answers_not_shown": answers,
        "reactions_unlinked": reactions,
        "by_status": dict(sorted(found.statuses.items())),
        "sends_failed_before_delivery": sum(1 for c in calls if c.failed in FAILED_BEFORE_DELIVERY),
        "sends_failed_after_delivery": dict(after),
        "resends_pressed": resends,
    }
