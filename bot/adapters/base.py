"""What every chat-platform adapter is given and what it promises. No platform types here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.core.access import Access
from bot.core.controls import Controls
from bot.core.conversation import Conversation
from bot.core.ratelimit import RateLimiter


@dataclass(frozen=True)
class Services:
    """The core parts an adapter translates to and from. Built once by `bot/app/kindred.py: services`."""

    conversation: Conversation
    controls: Controls
    limiter: RateLimiter
    access: Access


class PlatformAdapter(Protocol):
    name: str

    async def start(self) -> None:
        """Connect and begin serving; returns once serving has started."""
        ...

    async def stop(self) -> None:
        """Stop taking new updates, finish or hand back what is in flight, disconnect."""
        ...
