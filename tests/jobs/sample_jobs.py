"""Jobs that exist for the tests: each case of the contract in one small function.

Attempts are counted in a file named by the payload, so that a count survives process boundaries
(a Celery worker) and retries alike.
"""

from __future__ import annotations

import asyncio
import os
import signal
from datetime import UTC, datetime
from pathlib import Path

from bot.core.errors import JobError, StoreUnavailable
from bot.core.jobs import JobPayload, JobRegistry, report_progress
from bot.core.models import NewTurn
from bot.store.sqlite.store import SqliteStore
from bot.wiring.backends import open_store
from bot.wiring.job_store import StoreAccess, per_job
from bot.wiring.jobs import job_registry
from bot.wiring.settings import Settings
from tests.support.fakes import HashEmbedder


def count_attempt(path: str) -> int:
    """Append one line to `path`; returns how many lines it now has."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        os.write(fd, b"x\n")
    finally:
        os.close(fd)
    return Path(path).read_bytes().count(b"\n")


def sample_registry(settings: Settings, stores: StoreAccess | None = None) -> JobRegistry:
    """Kindred's own jobs plus the sample ones. `stores`: a worker process's store, else per job."""
    registry = job_registry(settings, stores=stores)
    add_sample_jobs(registry, stores or per_job(lambda: open_store(settings)))
    return registry


def add_sample_jobs(registry: JobRegistry, stores: StoreAccess) -> None:
    @registry.job("kindred.test.store_user_count", soft_s=10, hard_s=20)
    async def store_user_count(payload: JobPayload) -> JobPayload:
        """What every store job does first (take the store), and which process ran it."""
        async with stores() as store:
            return {"users": (await store.stats()).users, "pid": os.getpid()}

    @registry.job("kindred.test.kill_worker", soft_s=10, hard_s=20)
    async def kill_worker(payload: JobPayload) -> JobPayload:
        """SIGKILL the process running it on its first `kills` attempts, as an out-of-memory kill would."""
        attempt = count_attempt(payload["counter"])
        if attempt <= payload["kills"]:
            os.kill(os.getpid(), signal.SIGKILL)
        return {"attempts": attempt}

    @registry.job("kindred.test.quiet", soft_s=10, hard_s=20, keep_result=False)
    async def quiet(payload: JobPayload) -> JobPayload:
        """A job nobody asks the outcome of (as memory extraction): it leaves a line, or fails."""
        if payload.get("fail"):
            raise JobError("quiet job failed as asked")
        count_attempt(payload["counter"])
        return {"done": True}

    @registry.job("kindred.test.echo", soft_s=10, hard_s=20)
    async def echo(payload: JobPayload) -> JobPayload:
        return payload

    @registry.job("kindred.test.add", soft_s=10, hard_s=20, retries=3)
    async def add(payload: JobPayload) -> JobPayload:
        count_attempt(payload["counter"])
        return {"sum": payload["a"] + payload["b"]}  # a poison payload ("b": "x") raises TypeError

    @registry.job("kindred.test.flaky", soft_s=10, hard_s=20, retries=3, retry_delay_s=0.05)
    async def flaky(payload: JobPayload) -> JobPayload:
        attempt = count_attempt(payload["counter"])
        if attempt <= payload["failures"]:
            raise StoreUnavailable(f"store away on attempt {attempt}")
        return {"attempts": attempt}

    @registry.job("kindred.test.progress", soft_s=20, hard_s=30)
    async def progress(payload: JobPayload) -> JobPayload:
        """Reports a step, then waits for the test to create `release` (so it is read mid-run)."""
        report_progress({"step": "halfway", "n": payload["n"]})
        release = Path(payload["release"])
        for _ in range(400):
            if os.path.exists(release):  # noqa: ASYNC240 (a stat, on a test job)
                return {"done": True}
            await asyncio.sleep(0.025)
        return {"done": False}

    @registry.job("kindred.test.sleep", soft_s=1, hard_s=10)
    async def sleep(payload: JobPayload) -> JobPayload:
        await asyncio.sleep(payload["seconds"])
        return {"slept": payload["seconds"]}

    @registry.job("kindred.test.write_turn", soft_s=30, hard_s=60)
    async def write_turn(payload: JobPayload) -> JobPayload:
        """Store a turn under an idempotency key; the first run then keeps working for a while
        (the window in which a test kills its worker). A redelivered run must not store it twice."""
        embedder = HashEmbedder()
        store = await SqliteStore.open(Path(payload["db"]))
        try:
            text = payload["text"]
            turn = await store.turns.add_turn(
                NewTurn(
                    user_id=payload["user"],
                    chat_id="jobs",
                    role="user",
                    text=text,
                    embedding=embedder.vector(text),
                    embedding_model=embedder.model_name,
                    created_at=datetime.now(UTC),
                    idempotency_key=payload["key"],
                )
            )
        finally:
            await store.close()
        if count_attempt(payload["counter"]) == 1:
            await asyncio.sleep(payload["first_run_holds_s"])
        return {"turn_id": turn.id}
