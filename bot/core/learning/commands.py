"""The admins' chat commands about learning: `/train_now`, `/rollback` and `/canary [stop]`. Each
platform checks that the person is an admin (`Access.is_admin`) and renders the answer; the answers
are made here.

`/train_now` queues `kindred.training.nightly` and answers at once: it waits a few seconds at
most for the run to start (so that it can name it), and otherwise says the run is queued.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from bot.core.errors import JobError, QueueUnavailable
from bot.core.jobs import JobPayload
from bot.core.learning.canary import stop as stop_canary
from bot.core.learning.models import TrainingRun
from bot.core.learning.nightly import NIGHTLY_JOB
from bot.core.learning.runs import running_run
from bot.core.learning.serving import rollback
from bot.core.learning.variant_report import STOPPED_BY_ADMIN, canary_state, stopped_text
from bot.core.store import Store

ADMINS_ONLY = "That command is for Kindred's admins."
NOT_WIRED = "Learning is not set up in this Kindred."
CANARY_USAGE = (
    "/canary shows the candidate on trial; /canary stop stops it (words after stop are the reason)."
)
Submit = Callable[[str, JobPayload], object]
# How long /train_now waits to see its run start before answering "queued".
START_WAIT_S = 3.0
POLL_S = 0.2


class TrainingCommands:
    def __init__(
        self,
        store: Store,
        submit: Submit,
        *,
        stale_after: timedelta = timedelta(hours=1),
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        start_wait_s: float = START_WAIT_S,
    ) -> None:
        self.store = store
        self._submit = submit
        self._stale_after = stale_after
        self._clock = clock
        self._start_wait_s = start_wait_s

    async def train_now(self, admin_id: str) -> str:
        """Queue a nightly run now, unless one is running (then say which)."""
        running = await running_run(self.store)
        if running is not None and not self._stale(running):
            return f"A training run is already running (run {running.id})."
        key = f"admin:{admin_id}:{uuid.uuid4().hex[:12]}"
        try:
            self._submit(NIGHTLY_JOB, {"run_key": key})
        except (QueueUnavailable, JobError) as exc:
            return f"Training was not started: {exc}."
        started = await self._started(key)
        if started is None:
            return "Training is queued; it starts as soon as a training worker is free."
        if started.status == "skipped":
            return f"Training run {started.id} ended at once: {started.message}"
        return f"Training started, run {started.id}. /admin shows its progress."

    async def rollback(self) -> str:
        """Serve the version before the serving one (or the base model); say which serves now."""
        change = await rollback(self.store.adapters, self._clock())
        if not change.changed:
            return "Nothing to roll back: the base model already serves."
        return f"Rolled back: {change.describe()}."

    async def canary(self, admin_id: str, argument: str = "") -> str:
        """`/canary`: the running canary's state (or the last decided one); `/canary stop [reason]`
        stops it, and the serving variant keeps serving."""
        verb, _, reason = argument.strip().partition(" ")
        if not verb:
            return await canary_state(self.store.trials)
        if verb.lower() != "stop":
            return CANARY_USAGE
        why = f"{STOPPED_BY_ADMIN} ({admin_id})" + (f": {reason.strip()}" if reason.strip() else "")
        return stopped_text(await stop_canary(self.store.trials, why, self._clock()))

    def _stale(self, run: TrainingRun) -> bool:
        last = run.heartbeat_at or run.started_at
        return self._clock() - last > self._stale_after

    async def _started(self, key: str) -> TrainingRun | None:
        deadline = asyncio.get_running_loop().time() + self._start_wait_s
        while True:
            found = next((run for run in await self.store.adapters.list_runs(5) if run.job_key == key), None)
            if found is not None or asyncio.get_running_loop().time() >= deadline:
                return found
            await asyncio.sleep(POLL_S)
