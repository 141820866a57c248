"""A loopback fake server on a thread of its own, for tests that run the CLI's `main()`, which
starts (and ends) an event loop of its own on the test's thread."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Protocol, TypeVar


class Closing(Protocol):
    async def close(self) -> None: ...


S = TypeVar("S", bound=Closing)


@contextlib.contextmanager
def on_a_thread(start: Callable[[], Awaitable[S]]) -> Iterator[S]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = asyncio.run_coroutine_threadsafe(_started(start), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


async def _started(start: Callable[[], Awaitable[S]]) -> S:
    return await start()
