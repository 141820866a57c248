"""The real `kindred.miniapps.build` job on in-process threads over a store file, with the rules alone
(no model), and the /app commands over it: what the platform tests wire into their bots."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from bot.core.errors import StoreUnavailable
from bot.core.jobs import JobRegistry
from bot.core.miniapps.build import BuildPolicy
from bot.core.miniapps.commands import AppCommands
from bot.core.store import Store
from bot.core.usage import UsageMeter
from bot.jobs.inprocess import InProcessJobs
from bot.store.sqlite.store import SqliteStore
from bot.wiring.job_store import per_job
from bot.wiring.miniapp_jobs import add_app_jobs

APPS_URL = "https://apps.example"


@asynccontextmanager
async def app_commands(
    path: Path, *, store_down_for: int = 0
) -> AsyncIterator[Callable[[Store], AppCommands]]:
    """`store_down_for`: the job's first so many store openings fail, as when the database is down."""
    down = [store_down_for]

    async def opener() -> Store:
        if down[0] > 0:
            down[0] -= 1
            raise StoreUnavailable("the database is not answering")
        return await SqliteStore.open(path)

    registry = JobRegistry()
    # One retry, not the deployment's five (a minute of waits): a store down for two openings fails
    # the build within seconds, for the tests of what a failed build shows.
    add_app_jobs(registry, per_job(opener), BuildPolicy(), None, retries=1)
    jobs = InProcessJobs(registry, workers=2)
    try:
        yield lambda store: AppCommands(
            store.miniapps, jobs, lambda token: f"{APPS_URL}/a/{token}", poll_s=0.02,
            usage=UsageMeter(store.usage),
        )  # fmt: skip
    finally:
        await jobs.close()
