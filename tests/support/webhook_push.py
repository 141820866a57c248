"""Telegram's side of a webhook: post an update with the secret header, and post it again after
any answer but 2xx (or a dropped connection), as Telegram does until the bot takes it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import TracebackType

import aiohttp

from tests.support.telegram_updates import JSON

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


@dataclass
class Delivery:
    update_id: int
    statuses: list[int] = field(default_factory=list)  # every answer, 0 for a dropped connection


class WebhookPusher:
    def __init__(self, url: str, secret: str, *, retry_s: float = 0.2, give_up_s: float = 60.0) -> None:
        self.url, self.secret = url, secret
        self.retry_s, self.give_up_s = retry_s, give_up_s
        self._http: aiohttp.ClientSession | None = None

    async def post_once(self, update: JSON, url: str | None = None) -> int:
        assert self._http is not None
        try:
            async with self._http.post(
                url or self.url, json=update, headers={SECRET_HEADER: self.secret}
            ) as answer:
                await answer.read()
                return answer.status
        except (TimeoutError, aiohttp.ClientError, OSError):
            return 0

    async def deliver(self, update: JSON, url: str | None = None) -> Delivery:
        """Post until a 2xx answer; raises after `give_up_s`."""
        delivery = Delivery(int(update["update_id"]))
        deadline = asyncio.get_running_loop().time() + self.give_up_s
        while True:
            status = await self.post_once(update, url)
            delivery.statuses.append(status)
            if 200 <= status < 300:
                return delivery
            if asyncio.get_running_loop().time() >= deadline:
                raise AssertionError(f"update {delivery.update_id} never taken: {delivery.statuses}")
            await asyncio.sleep(self.retry_s)

    async def __aenter__(self) -> WebhookPusher:
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._http is not None:
            await self._http.close()
