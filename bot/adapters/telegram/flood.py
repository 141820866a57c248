"""Flood control toward Telegram, in token buckets that every replica can share (a `Buckets`).

It keeps the limits PTB's `AIORateLimiter` keeps (about 30 messages a second overall, 20 a minute
in each group or channel; requests without a chat are not limited), but its buckets may live in
Redis, so that two replicas together stay under them instead of each using them up. A 429 from
Telegram pauses this replica for the time Telegram names, then the request is tried again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

from telegram.constants import FloodLimit
from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from bot.core.chat.ports import Buckets

log = logging.getLogger(__name__)

Result = bool | dict[str, Any] | list[dict[str, Any]]
OVERALL_KEY = "telegram-flood:all"
GROUP_KEY = "telegram-flood:chat:"


class SharedFloodLimiter(BaseRateLimiter[int]):
    def __init__(
        self,
        buckets: Buckets,
        *,
        overall_per_s: float = FloodLimit.MESSAGES_PER_SECOND,
        group_per_minute: float = FloodLimit.MESSAGES_PER_MINUTE_PER_GROUP,
        max_retries: int = 5,
        bot_id: str = "",
    ) -> None:
        self.buckets = buckets
        self.overall_per_s = overall_per_s
        self.group_per_minute = group_per_minute
        self.max_retries = max_retries
        # Two bots on one Redis have two allowances.
        self._prefix = f"{bot_id}:"
        self._not_paused = asyncio.Event()
        self._not_paused.set()

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Result]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Result:
        retries = rate_limit_args or self.max_retries
        chat_id = data.get("chat_id")
        for attempt in range(retries + 1):
            await self._not_paused.wait()
            if chat_id is not None:
                group = _group(chat_id)
                if group is not None and self.group_per_minute > 0:
                    rate = self.group_per_minute / 60
                    await self._take(f"{GROUP_KEY}{group}", rate, self.group_per_minute)
                await self._take(OVERALL_KEY, self.overall_per_s, max(self.overall_per_s, 1.0))
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                if attempt == retries:
                    raise
                wait = exc.retry_after
                pause = float(wait.total_seconds() if isinstance(wait, timedelta) else wait) + 0.1
                log.info("telegram: flood limit hit (%s); retrying in %.1f s", endpoint, pause)
                self._not_paused.clear()
                try:
                    await asyncio.sleep(pause)
                finally:
                    self._not_paused.set()
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _take(self, key: str, rate_per_s: float, burst: float) -> None:
        # The bucket may be another replica's too: nothing here to wait on but the time it names.
        while True:
            wait = await self.buckets.take(self._prefix + key, rate_per_s, burst)
            if wait <= 0:
                return
            await asyncio.sleep(wait)


def _group(chat_id: object) -> str | None:
    """The chat a group limit applies to: a group or channel (a negative id, or an @username);
    None for a private chat."""
    with contextlib.suppress(ValueError, TypeError):
        chat_id = int(chat_id)  # type: ignore[call-overload]
    if isinstance(chat_id, int):
        return str(chat_id) if chat_id < 0 else None
    return str(chat_id)
