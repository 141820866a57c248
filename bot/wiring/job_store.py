"""How a job gets its store: `StoreAccess`, a context in which the job uses it.

- In a Celery worker (`WorkerStore`): the process's one store, and on PostgreSQL its one pool,
  opened by the first job that needs it, on the process's one event loop (workers/process.py), and
  closed when the process ends. A worker never migrates: `kindred migrate` does (compose runs it
  before the workers, `kindred run` at its start). While the store is behind this Kindred's schema,
  every job that needs it is refused with an error that says so, and the next job looks again.
- In the bot's own process (`per_job`): each job opens a store of its own and closes it, since
  every attempt there runs on an event loop of its own (bot/jobs/inprocess.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

from bot.core.errors import JobError
from bot.core.store import Store
from bot.wiring.backends import missing_migrations, open_concrete_store
from bot.wiring.settings import Settings

if TYPE_CHECKING:
    from bot.store.postgres.store import PostgresStore
    from bot.store.sqlite.store import SqliteStore

log = logging.getLogger(__name__)

StoreAccess = Callable[[], AbstractAsyncContextManager[Store]]
BEHIND = (
    "the store's schema is behind this Kindred (versions {missing} not applied): run `kindred migrate`; "
    "this worker refuses jobs that use the store until then"
)
OPENED = "worker store opened in process %d (%s)"


def per_job(opener: Callable[[], Awaitable[Store]]) -> StoreAccess:
    """A store opened for each job and closed after it."""

    @asynccontextmanager
    async def use() -> AsyncIterator[Store]:
        store = await opener()
        try:
            yield store
        finally:
            await store.close()

    return use


class WorkerStore:
    """A worker process's one store, shared by every job the process runs (on one event loop)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._store: SqliteStore | PostgresStore | None = None
        self._current = False  # the schema was found up to date: not looked at again
        self._lock: asyncio.Lock | None = None
        self.opened = 0

    @asynccontextmanager
    async def use(self) -> AsyncIterator[Store]:
        yield await self._ready()

    async def _ready(self) -> SqliteStore | PostgresStore:
        if self._store is not None and self._current:
            return self._store
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._store is None:
                self._store = await self._open()
            if not self._current:
                await self._check(self._store)
        return self._store

    async def _open(self) -> SqliteStore | PostgresStore:
        store = await open_concrete_store(self._settings, migrate=False)
        self.opened += 1
        log.info(OPENED, os.getpid(), store.backend)
        return store

    async def _check(self, store: SqliteStore | PostgresStore) -> None:
        missing = await missing_migrations(store)
        if missing:
            raise JobError(BEHIND.format(missing=", ".join(map(str, missing))))
        self._current = True

    async def close(self) -> None:
        store, self._store, self._current = self._store, None, False
        if store is not None:
            await store.close()
