"""The core services and options one Discord client serves with, reachable from any interaction,
and the replies it has in flight."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field

import discord

from bot.adapters.base import Services
from bot.adapters.discord.options import DiscordOptions


class InFlight:
    """Replies being written right now, so that stop() lets them finish before disconnecting."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[object]] = set()

    @contextlib.asynccontextmanager
    async def track(self) -> AsyncIterator[None]:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def drain(self, timeout_s: float) -> int:
        """Wait up to `timeout_s` for the replies in flight now. Returns how many did not finish."""
        pending = {task for task in self._tasks if task is not asyncio.current_task()}
        if not pending:
            return 0
        _, unfinished = await asyncio.wait(pending, timeout=timeout_s)
        return len(unfinished)


class Unlinked:
    """Messages that show a reply still being written, which the core cannot link to a turn yet.

    A reaction on one waits for the link instead of being dropped as "not a reply".
    """

    def __init__(self) -> None:
        self._links: dict[str, asyncio.Event] = {}

    def shown(self, message_id: str) -> None:
        self._links.setdefault(message_id, asyncio.Event())

    def done(self, message_ids: Iterable[str]) -> None:
        """The reply is linked (or never will be): reactions waiting on these go ahead."""
        for message_id in message_ids:
            link = self._links.pop(message_id, None)
            if link is not None:
                link.set()

    async def wait(self, message_id: str, timeout_s: float) -> None:
        link = self._links.get(message_id)
        if link is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(link.wait(), timeout_s)


@dataclass(frozen=True, slots=True)
class Kindred:
    services: Services
    options: DiscordOptions
    in_flight: InFlight = field(default_factory=InFlight)
    unlinked: Unlinked = field(default_factory=Unlinked)


def kindred_of(client: discord.Client) -> Kindred:
    """The services of the client an interaction arrived on (buttons are routed by discord.py,
    so they find their services through the client, not through a closure)."""
    found = getattr(client, "kindred", None)
    if not isinstance(found, Kindred):
        raise TypeError("this discord.Client does not serve Kindred")
    return found
