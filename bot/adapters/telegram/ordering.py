"""Updates of different chats run concurrently; updates of one chat run one at a time, in order.

A slow reply in one chat must not hold up another, but a person's second message must not be
answered before their first, and a reaction must not overtake the reply it rates.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

log = logging.getLogger(__name__)

# Updates of one chat waiting their turn, past which new ones are dropped.
MAX_WAITING_PER_CHAT = 100


class PerChatOrder(BaseUpdateProcessor):
    def __init__(self, max_concurrent_updates: int) -> None:
        super().__init__(max_concurrent_updates)
        # chat id -> (lock, updates holding or waiting for it); dropped when nobody needs it.
        self._locks: dict[int, tuple[asyncio.Lock, int]] = {}

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        # An update waiting for its chat holds one of the processor's slots (process_update is final
        # in PTB), so the adapter sizes the slots for waiting updates, not for running ones.
        chat = update.effective_chat if isinstance(update, Update) else None
        waiting = self._locks.get(chat.id, (None, 0))[1] if chat is not None else 0
        if waiting >= MAX_WAITING_PER_CHAT:
            # A flood in one chat must not take every slot from the others. Its sender is far past
            # the per-person rate limit by now, so the update would only be refused anyway.
            log.warning("telegram: chat %s has %d updates waiting; dropping one", chat, waiting)
            if isinstance(coroutine, Coroutine):
                coroutine.close()
            return
        async with self._turn_of(update):
            await coroutine

    @asynccontextmanager
    async def _turn_of(self, update: object) -> AsyncIterator[None]:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None:
            yield
            return
        lock, users = self._locks.get(chat.id, (asyncio.Lock(), 0))
        self._locks[chat.id] = (lock, users + 1)
        try:
            # asyncio.Lock wakes waiters first come, first served: arrival order is kept.
            async with lock:
                yield
        finally:
            lock, users = self._locks[chat.id]
            if users == 1:
                del self._locks[chat.id]
            else:
                self._locks[chat.id] = (lock, users - 1)

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass
