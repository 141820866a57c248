"""Which training runs are where: the one running now, and the one a job already finished. The
nightly job asks before it starts one; `/train now` asks which is running."""

from __future__ import annotations

from bot.core.learning.models import TrainingRun
from bot.core.models import JSONObject
from bot.core.store import Store

# How far back a job's earlier run is looked for: a job comes back within minutes, not nights.
RECENT_RUNS = 20


async def busy_result(store: Store) -> JSONObject:
    running = await running_run(store)
    which = f" (run {running.id})" if running is not None else ""
    return {"status": "busy", "message": f"a training run is already running{which}"}


async def ended_run(store: Store, job_key: str) -> TrainingRun | None:
    """This job's run that ended well (succeeded or skipped), among the latest. Every job key is
    unique to one request (a Celery id, `cli:…`, `admin:…`); a failed run's job runs again."""
    runs = await store.adapters.list_runs(RECENT_RUNS)
    return next(
        (run for run in runs if run.job_key == job_key and run.status in ("succeeded", "skipped")), None
    )


async def running_run(store: Store) -> TrainingRun | None:
    """The run that is running now, if any (the newest; the store allows one)."""
    return next((run for run in await store.adapters.list_runs(5) if run.status == "running"), None)
