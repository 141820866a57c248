"""A message answered once, though the platform delivers it twice.

The intake turns a second delivery away while it remembers the first. When its memory is gone (a
Redis failover brought it back empty, or it could not be told that the update was finished) and the
platform sends the update again (its webhook post had timed out), the conversation is the last
place that knows: the reply is stored under the message's key, waits in the outbox under it, or is
being written in this process right now (`Answering`). A copy that reaches another replica while
the store is down finds none of these: that one is answered twice (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from bot.core.models import Turn


class Answering:
    """The messages this process is answering now, by key: a second copy waits for the first."""

    def __init__(self) -> None:
        self._now: dict[str, asyncio.Event] = {}

    @asynccontextmanager
    async def one_at_a_time(self, key: str) -> AsyncIterator[None]:
        while (first := self._now.get(key)) is not None:
            await first.wait()
        done = self._now[key] = asyncio.Event()
        try:
            yield
        finally:
            del self._now[key]
            done.set()


def answered_before(stored: Turn, recent: Sequence[Turn]) -> bool:
    """Whether the message stored as `stored` has a reply among the chat's `recent` turns. A
    stored message older than every recent turn was handled long ago (a new one is the latest)."""
    if not recent:  # not read: the store went away after the message was stored
        return False
    if any(turn.role == "assistant" and turn.reply_to == stored.id for turn in recent):
        return True
    return all(turn.id != stored.id for turn in recent) and stored.id < recent[0].id
