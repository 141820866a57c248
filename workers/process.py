"""What one worker process holds for all its tasks: an event loop, in a thread of its own, on which
every task's coroutine runs, and what closes with it (the process's store, bot/wiring/job_store.py).

Celery's signals open and close it (Celery 5.6/5.7, `celery.signals`):
- prefork: `worker_process_init` in each child, after the fork; `worker_process_shutdown` as the
  child ends. The parent opens nothing, so nothing is forked half open.
- solo and threads: `worker_init` in the worker's one process; `worker_shutdown` at its end. (Celery
  5.7's solo pool also sends `worker_process_init`; starting twice is a no-op.)
On the threads pool every thread submits to the one loop (`asyncio.run_coroutine_threadsafe`), so
all of a worker's tasks share one store and, on PostgreSQL, one pool.

A task's soft time limit (prefork) arrives as an exception in the thread that waits for the
coroutine: the coroutine is then cancelled, so that it lets go of what it holds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from celery import signals
from celery.concurrency import get_implementation
from celery.concurrency.prefork import TaskPool as PreforkPool

log = logging.getLogger(__name__)

T = TypeVar("T")
# Shutting down waits this long for the store to close; a server that hangs must not hold the exit.
CLOSE_TIMEOUT_S = 10.0


class WorkerProcess:
    """One event loop per worker process; `closing` runs on it when the process ends."""

    def __init__(self, closing: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        self._closing = closing
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid: int | None = None
        self._lock = threading.Lock()

    def connect(self) -> None:
        """Open and close with Celery's worker signals (see the module's docstring)."""
        signals.worker_process_init.connect(self._on_process_init, weak=False)
        signals.worker_init.connect(self._on_worker_init, weak=False)
        signals.worker_process_shutdown.connect(self._on_shutdown, weak=False)
        signals.worker_shutdown.connect(self._on_shutdown, weak=False)

    def _on_process_init(self, **_: Any) -> None:
        self.start()

    def _on_worker_init(self, sender: Any = None, **_: Any) -> None:
        pool = get_implementation(getattr(sender, "pool_cls", None) or "prefork")
        if not (isinstance(pool, type) and issubclass(pool, PreforkPool)):
            self.start()

    def _on_shutdown(self, **_: Any) -> None:
        self.stop()

    def start(self) -> None:
        """Start this process's loop; a no-op when it runs (in a forked child, the parent's copy is
        not this process's and is left alone)."""
        with self._lock:
            if self._loop is not None and self._pid == os.getpid():
                return
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_serve, args=(loop,), name="kindred-loop", daemon=True)
            thread.start()
            self._loop, self._thread, self._pid = loop, thread, os.getpid()
        log.info("worker process %d: one event loop for its tasks", self._pid)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the process's loop and wait for it, from any thread."""
        self.start()  # a task run where no worker signal came (eagerly, in a test) starts it here
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # a time limit raised here, while the coroutine still runs
            raise

    def stop(self) -> None:
        """Close what the process holds, then its loop. A no-op where it never started."""
        with self._lock:
            loop, thread = self._loop, self._thread
            if loop is None or thread is None or self._pid != os.getpid():
                return
            self._loop = self._thread = None
        if self._closing is not None:
            try:
                asyncio.run_coroutine_threadsafe(self._closing(), loop).result(CLOSE_TIMEOUT_S)
            except Exception as exc:
                log.warning("worker process %d: its store did not close cleanly: %s", os.getpid(), exc)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_TIMEOUT_S)


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
