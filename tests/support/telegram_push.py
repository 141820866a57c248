"""Webhook delivery for the loopback Bot API (tests/support/telegram_api.py), as Telegram does it.

Opt-in: a `WebhookPusher` attached to a `FakeTelegramBotApi` posts each queued update, once a
webhook is set, to `origin` + the webhook URL's path (the fake keeps the https URL the bot set; the
origin stands for the TLS front that reaches the bot). As Telegram does: the chat's updates go one
at a time, in order, with the secret header; anything but a 2xx (or no answer) is tried again
with a growing pause, and an update leaves the queue only once answered 2xx. Up to
`max_connections` chats are posted to at once (Telegram's default is 40).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import aiohttp

from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.telegram_updates import JSON, update_type

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
FIRST_RETRY_S = 0.2
MAX_RETRY_S = 3.0
POST_TIMEOUT_S = 10.0


def chat_of(update: JSON) -> int:
    """The chat an update belongs to: Telegram orders delivery per chat."""
    body = update[update_type(update)]
    chat = body.get("chat") or (body.get("message") or {}).get("chat") or {}
    return int(chat.get("id") or body.get("from", {}).get("id") or 0)


@dataclass
class Delivery:
    """What became of one update: when it was queued and accepted, and how many posts it took."""

    update_id: int
    queued_at: float
    accepted_at: float | None = None
    attempts: int = 0
    statuses: list[int] = field(default_factory=list)  # 0: no answer (refused, reset, timed out)


class WebhookPusher:
    def __init__(self, api: FakeTelegramBotApi, origin: str, *, max_connections: int = 40) -> None:
        self.api = api
        self.origin = origin.rstrip("/")
        self.deliveries: dict[int, Delivery] = {}
        self._chats: dict[int, deque[JSON]] = {}
        self._slots = asyncio.Semaphore(max_connections)
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=POST_TIMEOUT_S))
        self.api.enqueue_listeners.append(self._wake.set)
        self._loop = asyncio.create_task(self._take_updates())

    async def stop(self) -> None:
        self.api.enqueue_listeners.remove(self._wake.set)
        for task in [self._loop, *self._tasks]:
            if task is not None:
                task.cancel()
        await asyncio.gather(
            *[t for t in [self._loop, *self._tasks] if t is not None], return_exceptions=True
        )
        if self._session is not None:
            await self._session.close()

    @property
    def pending(self) -> int:
        """Updates not yet accepted: queued at the fake, or waiting their chat's turn here."""
        return len(self.api.updates) + sum(len(q) for q in self._chats.values())

    async def _take_updates(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self.api.webhook is None:
                await asyncio.sleep(0.05)  # no webhook yet: the updates wait at the fake
                self._wake.set()
                continue
            taken, self.api.updates[:] = list(self.api.updates), []
            for update in taken:
                self.deliveries[update["update_id"]] = Delivery(update["update_id"], time.monotonic())
                chat = chat_of(update)
                if chat in self._chats:
                    self._chats[chat].append(update)
                else:
                    self._chats[chat] = deque([update])
                    self._start_chat(chat)

    def _start_chat(self, chat: int) -> None:
        task = asyncio.create_task(self._deliver_chat(chat))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver_chat(self, chat: int) -> None:
        queue = self._chats[chat]
        async with self._slots:
            while queue:
                await self._deliver(queue[0])
                queue.popleft()
        del self._chats[chat]

    async def _deliver(self, update: JSON) -> None:
        delivery = self.deliveries[update["update_id"]]
        pause = FIRST_RETRY_S
        while True:
            status = await self._post(update)
            delivery.attempts += 1
            delivery.statuses.append(status)
            if 200 <= status < 300:
                delivery.accepted_at = time.monotonic()
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, MAX_RETRY_S)

    async def _post(self, update: JSON) -> int:
        webhook = self.api.webhook
        if webhook is None or self._session is None:
            return 0
        url = self.origin + (urlsplit(str(webhook["url"])).path or "/")
        headers = {SECRET_HEADER: str(webhook.get("secret_token") or "")}
        with contextlib.suppress(aiohttp.ClientError, TimeoutError):
            async with self._session.post(url, json=update, headers=headers) as response:
                await response.read()
                return response.status
        return 0
