"""Waiting in async tests for something another thread, process or server does."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

POLL_S = 0.02


async def wait_until(
    check: Callable[[], object | Awaitable[object]], within_s: float = 30.0, *, what: str | None = None
) -> None:
    """Return once `check()` is true (it may be a coroutine function); AssertionError naming `what`
    if it is not within `within_s`.

    The event loop keeps running between checks, so the tasks being waited on make progress.
    """
    deadline = time.monotonic() + within_s
    while not await _holds(check):
        if time.monotonic() >= deadline:
            raise AssertionError(f"not true within {within_s:g} s: {what or _name(check)}")
        await asyncio.sleep(POLL_S)


async def _holds(check: Callable[[], object | Awaitable[object]]) -> bool:
    result = check()
    return bool(await result if inspect.isawaitable(result) else result)


def _name(check: Callable[[], object]) -> str:
    name = getattr(check, "__name__", "")
    return name if name and name != "<lambda>" else "the awaited condition"
