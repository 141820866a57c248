"""What the job queue promises when things go wrong, with real Redis and real worker processes."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from bot.core.errors import JobError, QueueUnavailable
from bot.core.jobs import JobRegistry
from bot.core.miniapps.commands import AppCommands
from bot.jobs.celery_runner import CeleryJobs, make_app
from bot.store.sqlite.store import SqliteStore
from tests.jobs.workerproc import TEST_REDIS_DB, RedisServer, Worker, flush, redis_url
from tests.support.waiting import wait_until

pytestmark = pytest.mark.procs

# Redelivery waits for the visibility timeout; a short one for these workers only keeps it quick.
SHORT_VISIBILITY_S = "2"


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


async def test_a_job_whose_worker_is_killed_is_redelivered_and_its_effect_happens_once(
    tmp_path: Path, registry: JobRegistry
) -> None:
    url = redis_url(TEST_REDIS_DB + 1)  # its own database: no other worker may take the job
    flush(url)
    first = Worker(url, tmp_path / "first", KINDRED_VISIBILITY_TIMEOUT_S=SHORT_VISIBILITY_S)
    second: Worker | None = None
    jobs = CeleryJobs.connect(url, registry)
    db, counter = tmp_path / "turns.db", tmp_path / "runs"
    payload = {"db": str(db), "user": "ann", "key": "telegram:1:42", "text": "I sleep badly lately"}
    try:
        first.wait_ready()
        job_id = jobs.submit(
            "kindred.test.write_turn", {**payload, "counter": str(counter), "first_run_holds_s": 30}
        )
        # The turn is stored; the job is still running.
        await wait_until(lambda: lines(counter) == 1, within_s=20, what="the first run's turn")
        first.kill()  # SIGKILL: no chance to ack, requeue or say goodbye

        second = Worker(url, tmp_path / "second", KINDRED_VISIBILITY_TIMEOUT_S=SHORT_VISIBILITY_S)
        result = await jobs.result(job_id, 30)

        assert lines(counter) == 2  # redelivered and run again to the end
        store = await SqliteStore.open(db)
        try:
            turns = await store.turns.recent_turns("ann", "jobs", 10)
        finally:
            await store.close()
        assert [(t.id, t.text) for t in turns] == [(result["turn_id"], "I sleep badly lately")]
    finally:
        first.kill()
        if second is not None:
            second.kill()
        await jobs.close()
        flush(url)


async def test_with_redis_gone_submit_says_busy_at_once_and_works_again_when_it_returns(
    tmp_path: Path, registry: JobRegistry
) -> None:
    server = RedisServer(tmp_path / "redis").start()
    worker = Worker(server.url, tmp_path / "worker")
    jobs = CeleryJobs.connect(server.url, registry)
    try:
        worker.wait_ready()
        assert await jobs.result(jobs.submit("kindred.test.echo", {"n": 1}), 20) == {"n": 1}

        server.stop()
        started = time.monotonic()
        with pytest.raises(QueueUnavailable, match=r"^busy, try again shortly"):
            jobs.submit("kindred.test.echo", {"n": 2})
        assert time.monotonic() - started < 3

        server.start()  # same port; the same client and worker carry on
        assert await jobs.result(jobs.submit("kindred.test.echo", {"n": 3}), 40) == {"n": 3}
        assert "'n': 2" not in worker.log()  # what could not be queued never ran
    finally:
        await jobs.close()
        worker.kill()
        server.stop()


async def test_redis_on_a_dead_port_is_refused_quickly_with_a_clear_error(registry: JobRegistry) -> None:
    from tests.jobs.workerproc import free_port

    jobs = CeleryJobs.connect(f"redis://127.0.0.1:{free_port()}/0", registry)
    try:
        started = time.monotonic()
        with pytest.raises(QueueUnavailable, match="busy, try again shortly"):
            jobs.submit("kindred.test.echo", {"n": 1})
        with pytest.raises(QueueUnavailable):
            await jobs.depths()
        assert time.monotonic() - started < 5
    finally:
        await jobs.close()


async def test_a_poison_job_fails_once_is_recorded_and_the_queue_moves_on(
    worker: Worker, session_redis: str, registry: JobRegistry, tmp_path: Path
) -> None:
    jobs = CeleryJobs.connect(session_redis, registry)
    counter = tmp_path / "runs"
    try:
        poison = jobs.submit("kindred.test.add", {"a": 1, "b": "not a number", "counter": str(counter)})
        normal = jobs.submit("kindred.test.add", {"a": 1, "b": 2, "counter": str(tmp_path / "other")})
        with pytest.raises(JobError, match="TypeError"):
            await jobs.result(poison, 20)
        assert await jobs.result(normal, 20) == {"sum": 3}

        recorded = make_app(session_redis, registry).AsyncResult(poison)
        assert recorded.state == "FAILURE"
        assert "kindred.test.add failed: TypeError" in str(recorded.result)
        await asyncio.sleep(0.5)
        assert lines(counter) == 1  # retries=3, yet it ran once: a bad payload is never retried
        log = worker.log()
        assert f"job kindred.test.add ({poison}) failed, attempt 1: kindred.test.add failed: TypeError" in log
        assert f"({poison}) will be retried" not in log
    finally:
        await jobs.close()


async def test_an_app_build_asked_while_redis_restarts_waits_for_it_and_is_built(
    tmp_path: Path, registry: JobRegistry
) -> None:
    """bench/soak.py: /app during a Redis restart answered "I can't start building right now". The
    build now waits out a queue that is gone for seconds, and the person gets their link."""
    server = RedisServer(tmp_path / "redis").start()
    db = tmp_path / "apps.db"
    store = await SqliteStore.open(db)
    rules_only = {"KINDRED_APP_MODEL_PASS": "false", "KINDRED_APP_FREE_FORM": "off"}
    worker = Worker(
        server.url, tmp_path / "worker", queues="build", DATABASE_URL=f"sqlite:///{db}", **rules_only
    )
    jobs = CeleryJobs.connect(server.url, registry)
    steps: list[str] = []

    async def show(step: str) -> None:
        steps.append(step)

    try:
        worker.wait_ready()
        commands = AppCommands(
            store.miniapps, jobs, lambda token: f"https://apps.example/a/{token}", poll_s=0.05
        )
        server.stop()

        async def back_soon() -> None:
            await asyncio.sleep(1.5)
            await asyncio.to_thread(server.start)

        restart = asyncio.create_task(back_soon())
        answer = await commands.build("telegram:1", "telegram:1", "a packing list for my beach trip", show)
        await restart
        assert (answer.outcome, answer.retry_id) == ("built", None), answer
        assert answer.url is not None and answer.url.startswith("https://apps.example/a/")
        assert steps  # the build was under way before the link came
    finally:
        await jobs.close()
        worker.kill()
        server.stop()
        await store.close()


async def test_a_job_that_ends_while_redis_restarts_stores_its_result_when_redis_is_back(
    tmp_path: Path, registry: JobRegistry
) -> None:
    """bench/soak.py: a build that finished while Redis was down was recorded as FAILURE (the
    worker could not store its state) and the person read "Something went wrong". The worker now
    keeps trying to store the result until Redis is back, and the job is not run again."""
    server = RedisServer(tmp_path / "redis", persist=True).start()
    worker = Worker(server.url, tmp_path / "worker", KINDRED_VISIBILITY_TIMEOUT_S="60")
    jobs = CeleryJobs.connect(server.url, registry)
    db, counter = tmp_path / "turns.db", tmp_path / "runs"
    payload = {"db": str(db), "user": "ann", "key": "telegram:1:43", "text": "I sleep badly lately"}
    try:
        worker.wait_ready()
        job_id = jobs.submit(
            "kindred.test.write_turn", {**payload, "counter": str(counter), "first_run_holds_s": 3}
        )
        await wait_until(lambda: lines(counter) == 1, within_s=20, what="the job's turn")
        server.stop()  # the job ends in about 3 s, with nowhere to write its result
        await asyncio.sleep(6)
        await asyncio.to_thread(server.start)
        result = await jobs.result(job_id, 45)
        assert isinstance(result.get("turn_id"), int), result
        assert lines(counter) == 1  # stored once, not failed and not run again
    finally:
        await jobs.close()
        worker.kill()
        server.stop()
