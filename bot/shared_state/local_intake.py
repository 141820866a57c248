"""Webhook updates taken in this process (the `Intake` port): today's behaviour, for one replica.

Every update gets a ticket in its chat when it arrives, and the chat's tickets are handled in
order. Several replicas share the same bookkeeping in Redis (bot/shared_state/redis_intake.py).
In one process a held ticket cannot outlive its holder, so nothing here expires but what is
remembered of finished updates.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.core.models import Admission

# Finished updates remembered to drop the platform's retries, at most this many, for this long.
RECENT_UPDATES = 10_000
REMEMBER_S = 3600.0
# Chats with nothing in flight kept past this many are dropped, least recently used first: such a
# chat starts again from ticket 1, which is as good as going on.
MAX_IDLE_CHATS = 100_000


@dataclass
class _Chat:
    next_ticket: int = 0
    served: int = 0  # every ticket up to this one is finished (or was given up)
    held: set[int] = field(default_factory=set)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class LocalIntake:
    def __init__(
        self, *, remember_s: float = REMEMBER_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._remember_s = remember_s
        self._clock = clock
        self._held: dict[str, Admission] = {}
        self._finished: OrderedDict[str, float] = OrderedDict()  # update key -> when
        self._chats: OrderedDict[str, _Chat] = OrderedDict()

    async def admit(self, update_key: str, chat_key: str | None) -> Admission:
        self._forget_old()
        if update_key in self._finished:
            return Admission("duplicate", update_key, chat_key)
        if update_key in self._held:
            return Admission("busy", update_key, chat_key)
        ticket = 0
        if chat_key is not None:
            chat = self._chats.setdefault(chat_key, _Chat())
            self._chats.move_to_end(chat_key)
            chat.next_ticket += 1
            ticket = chat.next_ticket
            chat.held.add(ticket)
        admission = Admission("handle", update_key, chat_key, ticket)
        self._held[update_key] = admission
        return admission

    async def wait_turn(self, admission: Admission) -> None:
        if admission.chat_key is None or not admission.ticket:
            return
        chat = self._chats[admission.chat_key]
        while not _its_turn(chat, admission.ticket):
            changed = chat.changed
            await changed.wait()

    async def finish(self, admission: Admission) -> None:
        self._held.pop(admission.update_key, None)
        self._finished[admission.update_key] = self._clock()
        self._finished.move_to_end(admission.update_key)
        chat = self._chats.get(admission.chat_key or "")
        if chat is None or not admission.ticket:
            return
        chat.held.discard(admission.ticket)
        chat.served = max(chat.served, admission.ticket)
        chat.changed.set()
        chat.changed = asyncio.Event()
        if len(self._chats) > MAX_IDLE_CHATS:
            oldest, first = next(iter(self._chats.items()))
            if not first.held:
                del self._chats[oldest]

    async def release(self, admission: Admission) -> None:
        # Held by nobody now, so the chat's later tickets go on; a copy takes a new ticket.
        self._held.pop(admission.update_key, None)
        chat = self._chats.get(admission.chat_key or "")
        if chat is not None:
            chat.held.discard(admission.ticket)
            chat.changed.set()
            chat.changed = asyncio.Event()

    async def close(self) -> None:
        pass

    def _forget_old(self) -> None:
        horizon = self._clock() - self._remember_s
        while self._finished and (
            len(self._finished) > RECENT_UPDATES or next(iter(self._finished.values())) < horizon
        ):
            self._finished.popitem(last=False)


def _its_turn(chat: _Chat, ticket: int) -> bool:
    """Every earlier ticket is served, or none of those not served is held any more (an update
    dropped without finishing): then the chat goes on from here."""
    if chat.served >= ticket - 1:
        return True
    if not any(chat.served < held < ticket for held in chat.held):
        chat.served = ticket - 1
        return True
    return False
