"""Writes that the store could not take yet. Kept in order, retried, and spilled to a file at exit.

A locked SQLite file or a Postgres server that went away must not cost a person their words.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from bot.core.errors import StoreUnavailable
from bot.core.models import Feedback, MessageLink, NewTurn
from bot.core.ports import TurnLog


@dataclass(frozen=True, slots=True)
class RemoveFeedback:
    turn_id: int
    user_id: str
    source: str


Pending = NewTurn | Feedback | RemoveFeedback | MessageLink


class Outbox:
    def __init__(self) -> None:
        self._pending: deque[Pending] = deque()
        # Many conversations share one outbox; two flushing at once would write an item twice.
        self._flushing = asyncio.Lock()

    def __len__(self) -> int:
        return len(self._pending)

    def pending(self) -> tuple[Pending, ...]:
        return tuple(self._pending)

    def add(self, item: Pending) -> None:
        self._pending.append(item)

    async def flush(self, log: TurnLog) -> int:
        """Write what is pending, oldest first, until the store refuses again. Returns how many."""
        written = 0
        async with self._flushing:
            while self._pending:
                item = self._pending[0]
                try:
                    await apply(log, item)
                except StoreUnavailable:
                    break
                self._pending.popleft()
                written += 1
        return written

    def spill(self, folder: Path, stamp: str) -> list[Path]:
        """Write what is still pending to files `kindred memory import` reads. Empties the box."""
        turns = [item for item in self._pending if isinstance(item, NewTurn)]
        reactions = [item for item in self._pending if isinstance(item, Feedback | RemoveFeedback)]
        # Message links are not spilled: they only matter while the platform message is fresh.
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
        return written


async def apply(log: TurnLog, item: Pending) -> None:
    """Write one pending item to the store now."""
    if isinstance(item, NewTurn):
        await log.add_turn(item)
    elif isinstance(item, Feedback):
        await log.record_feedback(item)
    elif isinstance(item, MessageLink):
        await log.link_message(item)
    else:
        await log.remove_feedback(item.turn_id, item.user_id, item.source)


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
