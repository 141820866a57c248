"""Writes that the store could not take yet. Kept in order, retried, and spilled to a file at exit.

A locked SQLite file or a Postgres server that went away must not cost a person their words.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict, deque
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from bot.core.chat.ports import TurnLog
from bot.core.chat.reply_turn import REPLY_SUFFIX
from bot.core.errors import StoreUnavailable
from bot.core.models import Feedback, MessageLink, NewTurn

log = logging.getLogger(__name__)

# Turns written from the outbox whose ids are remembered, by idempotency key: a reply sent while
# the store was down is linked to its platform message after the outbox wrote it.
REMEMBERED_IDS = 1024


@dataclass(frozen=True, slots=True)
class RemoveFeedback:
    turn_id: int
    user_id: str
    source: str


@dataclass(frozen=True, slots=True)
class PendingLink:
    """A platform message showing a reply that was not stored yet when it was sent: it names the
    reply by its idempotency key, and becomes a `MessageLink` once the outbox has written it."""

    platform: str
    chat_id: str
    message_id: str
    turn_key: str
    user_id: str


@dataclass(frozen=True, slots=True)
class PendingFeedback:
    """A reaction on a reply that was not stored yet, shown while the store was down: it names the
    reply by its key, waits behind that reply's `PendingLink`, and becomes its feedback (or takes it
    away: `emoji` None) once the outbox has written the reply."""

    turn_key: str
    user_id: str
    source: str
    emoji: str | None
    value: float
    created_at: datetime


Pending = NewTurn | Feedback | RemoveFeedback | MessageLink | PendingLink | PendingFeedback


class Outbox:
    def __init__(self) -> None:
        self._pending: deque[Pending] = deque()
        # Many conversations share one outbox; two flushing at once would write an item twice.
        self._flushing = asyncio.Lock()
        self._stored: OrderedDict[str, int] = OrderedDict()
        # The keys of the turns waiting: a turn is kept once, and a reply waiting here is found.
        self._turn_keys: set[str] = set()

    def __len__(self) -> int:
        return len(self._pending)

    def pending(self) -> tuple[Pending, ...]:
        return tuple(self._pending)

    def add(self, item: Pending) -> None:
        if isinstance(item, NewTurn) and item.idempotency_key is not None:
            if item.idempotency_key in self._turn_keys:
                return  # a second delivery of a message that waits already
            self._turn_keys.add(item.idempotency_key)
        self._pending.append(item)

    def waits(self, turn_key: str) -> bool:
        """Whether the turn with this idempotency key waits here."""
        return turn_key in self._turn_keys

    async def apply(self, store: TurnLog, item: Pending) -> None:
        """Write one item now; a turn's id is remembered for the links that name it by key."""
        if isinstance(item, NewTurn):
            turn = await store.add_turn(self._naming_its_message(item))
            if item.idempotency_key is not None:
                self._stored[item.idempotency_key] = turn.id
                while len(self._stored) > REMEMBERED_IDS:
                    self._stored.popitem(last=False)
        elif isinstance(item, PendingLink | PendingFeedback):
            turn_id = self._stored.get(item.turn_key)
            if turn_id is None:  # its reply was spilled or forgotten: no turn to link or credit
                log.warning("a message link or reaction names a reply that was never stored; dropped")
            elif isinstance(item, PendingLink):
                await store.link_message(
                    MessageLink(item.platform, item.chat_id, item.message_id, turn_id, item.user_id)
                )
            elif item.emoji is None:
                await store.remove_feedback(turn_id, item.user_id, item.source)
            else:
                feedback = Feedback(
                    turn_id, item.user_id, item.emoji, item.value, item.created_at, item.source
                )
                await store.record_feedback(feedback)
        elif isinstance(item, Feedback):
            await store.record_feedback(item)
        elif isinstance(item, MessageLink):
            await store.link_message(item)
        else:
            await store.remove_feedback(item.turn_id, item.user_id, item.source)

    def _naming_its_message(self, turn: NewTurn) -> NewTurn:
        """A reply written while its message waited here answers it once both are stored: the
        history, the night's pairs and a second delivery of the message find it by `reply_to`."""
        key = turn.idempotency_key or ""
        message = self._stored.get(key.removesuffix(REPLY_SUFFIX)) if key.endswith(REPLY_SUFFIX) else None
        if turn.role != "assistant" or turn.reply_to is not None or message is None:
            return turn
        return replace(turn, reply_to=message)

    async def flush(self, log: TurnLog) -> int:
        """Write what is pending, oldest first, until the store refuses again. Returns how many."""
        written = 0
        async with self._flushing:
            while self._pending:
                item = self._pending[0]
                try:
                    await self.apply(log, item)
                except StoreUnavailable:
                    break
                self._pending.popleft()
                if isinstance(item, NewTurn) and item.idempotency_key is not None:
                    self._turn_keys.discard(item.idempotency_key)
                written += 1
        return written

    def spill(self, folder: Path, stamp: str) -> list[Path]:
        """Write what is still pending to files `kindred memory import` reads. Empties the box."""
        turns = [item for item in self._pending if isinstance(item, NewTurn)]
        reactions = [item for item in self._pending if isinstance(item, Feedback | RemoveFeedback)]
        # Message links are not spilled: they only matter while the platform message is fresh; nor
        # are reactions on replies not stored yet, which a spilled reply, stored anew, cannot match.
        written: list[Path] = []
        folder.mkdir(parents=True, exist_ok=True)
        if turns:
            path = folder / f"unsaved-turns-{stamp}.jsonl"
            path.write_text("".join(_json_line(_turn_line(t)) for t in turns), encoding="utf-8")
            written.append(path)
        if reactions:
            path = folder / f"unsaved-reactions-{stamp}.jsonl"
            path.write_text("".join(_json_line(_reaction_line(r)) for r in reactions), encoding="utf-8")
            written.append(path)
        self._pending.clear()
        self._turn_keys.clear()
        return written


async def keep_flushing(outbox: Outbox, store: TurnLog, every_s: float) -> None:
    """Retry what waits every `every_s` seconds until cancelled. A write flushes the outbox too,
    but a person who goes quiet after an outage would otherwise keep their words out of the store
    until the next write, or the spill at exit."""
    while True:
        await asyncio.sleep(every_s)
        if not len(outbox):
            continue
        try:
            written = await outbox.flush(store)
        except Exception as exc:  # a write the store rejects for good must not stop the retries
            log.warning("retrying waiting writes failed: %s", type(exc).__name__)
            continue
        if written:
            log.info("the store is back: %d waiting writes stored", written)


def _json_line(value: dict[str, object]) -> str:
    return json.dumps(value, ensure_ascii=False) + "\n"


def _turn_line(turn: NewTurn) -> dict[str, object]:
    return {
        "user": turn.user_id,
        "text": turn.text,
        "speaker": turn.role,
        "timestamp": turn.created_at.isoformat(),
        "meta": {**turn.meta, "chat_id": turn.chat_id},
    }


def _reaction_line(item: Feedback | RemoveFeedback) -> dict[str, object]:
    if isinstance(item, Feedback):
        return {
            "turn_id": item.turn_id,
            "user": item.user_id,
            "emoji": item.emoji,
            "value": item.value,
            "source": item.source,
            "timestamp": item.created_at.isoformat(),
        }
    return {"turn_id": item.turn_id, "user": item.user_id, "source": item.source, "removed": True}
