"""Several requests that stand or fall together: best-of-n's candidates, fetched at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")


async def all_of(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Every result, in order, awaited concurrently. The first to fail cancels the rest, which are
    awaited before its error is raised as it is (no ExceptionGroup, no task left behind)."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
