"""Updates of different chats run concurrently; updates of one chat run one at a time, in order.

A slow reply in one chat must not hold up another, but a person's second message must not be
answered before their first, and a reaction must not overtake the reply it rates.

A webhook update was admitted by the `Intake` when it arrived, with a ticket in its chat: it waits
for its chat's earlier tickets, which other replicas may hold, and is finished in the intake once
handled (its webhook post is answered then). A polled update takes this process's lock of its chat,
in arrival order.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from bot.core.chat.ports import Intake
from bot.core.models import Admission

log = logging.getLogger(__name__)

# Updates of one chat waiting their turn, past which new ones are dropped.
MAX_WAITING_PER_CHAT = 100


@dataclass(frozen=True)
class Admitted:
    """A webhook update let in: its place, and what its webhook post waits for."""

    admission: Admission
    handled: asyncio.Future[None]


class PerChatOrder(BaseUpdateProcessor):
    def __init__(self, max_concurrent_updates: int, intake: Intake) -> None:
        super().__init__(max_concurrent_updates)
        self.intake = intake
        # Webhook updates by update id, from the post that brought them until they are processed.
        self.admitted: dict[int, Admitted] = {}
        # chat id -> (lock, updates holding or waiting for it); dropped when nobody needs it.
        self._locks: dict[int, tuple[asyncio.Lock, int]] = {}
        self._waiting: Counter[int] = Counter()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        # An update waiting for its chat holds one of the processor's slots (process_update is final
        # in PTB), so the adapter sizes the slots for waiting updates, not for running ones.
        admitted = self.admitted.pop(update.update_id, None) if isinstance(update, Update) else None
        chat = update.effective_chat if isinstance(update, Update) else None
        finished = False
        try:
            if chat is not None and self._waiting[chat.id] >= MAX_WAITING_PER_CHAT:
                # A flood in one chat must not take every slot from the others. Its sender is far
                # past the per-person rate limit by now, so the update would only be refused anyway.
                waiting = self._waiting[chat.id]
                log.warning("telegram: chat %s has %d updates waiting; dropping one", chat.id, waiting)
                if isinstance(coroutine, Coroutine):
                    coroutine.close()
            else:
                async with self._turn_of(update, admitted):
                    await coroutine
            finished = True
        finally:
            if admitted is not None:
                await self._settle(admitted, finished)

    async def _settle(self, admitted: Admitted, finished: bool) -> None:
        if finished:
            await self.intake.finish(admitted.admission)
        if not admitted.handled.done():
            if finished:
                admitted.handled.set_result(None)
            else:  # cancelled at shutdown: the post is answered 503, so Telegram sends it again
                admitted.handled.cancel()

    @asynccontextmanager
    async def _turn_of(self, update: object, admitted: Admitted | None) -> AsyncIterator[None]:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None:
            yield
            return
        # Holding or waiting for the chat's turn: what the flood check counts.
        self._waiting[chat.id] += 1
        try:
            if admitted is not None:
                await self.intake.wait_turn(admitted.admission)
                yield
            else:
                async with self._local_turn(chat.id):
                    yield
        finally:
            self._leave(chat.id)

    def _leave(self, chat_id: int) -> None:
        self._waiting[chat_id] -= 1
        if self._waiting[chat_id] <= 0:
            del self._waiting[chat_id]

    @asynccontextmanager
    async def _local_turn(self, chat_id: int) -> AsyncIterator[None]:
        lock, users = self._locks.get(chat_id, (asyncio.Lock(), 0))
        self._locks[chat_id] = (lock, users + 1)
        try:
            # asyncio.Lock wakes waiters first come, first served: arrival order is kept.
            async with lock:
                yield
        finally:
            lock, users = self._locks[chat_id]
            if users == 1:
                del self._locks[chat_id]
            else:
                self._locks[chat_id] = (lock, users - 1)

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass
