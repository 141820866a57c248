"""Watching the event loop's heartbeat while blocking-prone work runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")
TICK_S = 0.005


@dataclass
class Heartbeat:
    """The gaps between ticks of a 5 ms ticker, and how long the watched work took."""

    gaps: list[float] = field(default_factory=list)
    elapsed: float = 0.0

    def assert_never_blocked(self, *, longest_gap_s: float = 0.25) -> None:
        assert self.elapsed > 0.1, "the work was too short to show anything"
        assert len(self.gaps) >= self.elapsed / 0.05
        assert max(self.gaps) < longest_gap_s


async def heartbeat_during(work: Awaitable[T]) -> tuple[T, Heartbeat]:
    beat = Heartbeat()
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(TICK_S)
            now = time.monotonic()
            beat.gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    started = time.monotonic()
    try:
        result = await work
    finally:
        beat.elapsed = time.monotonic() - started
        done.set()
        await ticking
    return result, beat
