"""An app build whose result goes with Redis's data (a Redis back empty, bench/soak.py's
redis_failover) is answered from the store, where the worker recorded the app: the person got
"Saving it…" and then nothing (CI's soak lost two builds so). A build whose job went with the
queue's data before any worker took it is sent again.

Real Redis, a real Celery worker, a real SQLite store. The loss is Redis's own: keyspace
notifications tell a watcher the moment the worker writes a result, and it deletes that key, as an
emptied Redis would have lost it (emptying it by hand at the right moment is a race)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import redis

from bot.core.jobs import JobRegistry
from bot.core.miniapps.commands import AppCommands
from bot.jobs.celery_runner import CeleryJobs
from bot.jobs.inprocess import InProcessJobs
from bot.store.sqlite.store import SqliteStore
from tests.jobs.workerproc import RedisServer, Worker
from tests.support.waiting import wait_until

RULES_ONLY = {"KINDRED_APP_MODEL_PASS": "false", "KINDRED_APP_FREE_FORM": "off"}


def lose_every_result(url: str, stop: threading.Event, lost: list[str]) -> threading.Thread:
    client = redis.Redis.from_url(url)
    client.config_set("notify-keyspace-events", "K$")
    pubsub = client.pubsub()
    pubsub.psubscribe("__keyspace@0__:celery-task-meta-*")

    def watch() -> None:
        while not stop.is_set():
            message = pubsub.get_message(timeout=0.1)
            if message and message["type"] == "pmessage" and message["data"] == b"set":
                key = message["channel"].decode().removeprefix("__keyspace@0__:")
                client.delete(key)
                lost.append(key)
        pubsub.close()
        client.close()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


async def test_a_build_whose_result_redis_lost_is_answered_from_the_store(
    tmp_path: Path, registry: JobRegistry
) -> None:
    server = RedisServer(tmp_path / "redis").start()
    db = tmp_path / "apps.db"
    store = await SqliteStore.open(db)
    worker = Worker(
        server.url, tmp_path / "worker", queues="build", DATABASE_URL=f"sqlite:///{db}", **RULES_ONLY
    )
    jobs = CeleryJobs.connect(server.url, registry)
    stop, lost = threading.Event(), []
    watcher = lose_every_result(server.url, stop, lost)
    steps: list[str] = []

    async def show(step: str) -> None:
        steps.append(step)

    try:
        worker.wait_ready()
        commands = AppCommands(
            store.miniapps, jobs, lambda token: f"https://apps.example/a/{token}", poll_s=0.05
        )
        answer = await commands.build("telegram:1", "telegram:1", "a packing list for my beach trip", show)
        assert lost, "the worker wrote no result to lose"
        assert (answer.outcome, answer.retry_id) == ("built", None), answer
        assert answer.url is not None and answer.url.startswith("https://apps.example/a/")
        assert "is ready" in answer.text
        [app] = await store.miniapps.list_apps("telegram:1", 5)
        assert answer.url.endswith(app.token)
    finally:
        stop.set()
        watcher.join(timeout=5)
        await jobs.close()
        worker.kill()
        server.stop()
        await store.close()


async def test_a_job_is_lost_only_when_its_queue_lost_its_data(tmp_path: Path, registry: JobRegistry) -> None:
    server = RedisServer(tmp_path / "redis").start()
    jobs = CeleryJobs.connect(server.url, registry)
    in_process = InProcessJobs(registry)
    try:
        queued = jobs.submit("kindred.test.echo", {"n": 1})  # no worker: it waits in the queue
        assert not await jobs.lost(queued)
        server.stop()
        assert not await jobs.lost(queued), "Redis unreachable: nothing is known, so nothing is lost"
        server.start()  # back empty
        assert await jobs.lost(queued)
        assert not await in_process.lost(in_process.submit("kindred.test.echo", {"n": 2}))
    finally:
        await jobs.close()
        await in_process.close()
        server.stop()


async def test_a_build_whose_job_redis_lost_before_any_worker_took_it_is_sent_again_and_built(
    tmp_path: Path, registry: JobRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    server = RedisServer(tmp_path / "redis").start()
    db = tmp_path / "apps.db"
    store = await SqliteStore.open(db)
    jobs = CeleryJobs.connect(server.url, registry)
    steps: list[str] = []

    async def show(step: str) -> None:
        steps.append(step)

    worker: Worker | None = None
    try:
        commands = AppCommands(
            store.miniapps, jobs, lambda token: f"https://apps.example/a/{token}", poll_s=0.05, timeout_s=90
        )
        building = asyncio.create_task(
            commands.build("telegram:1", "telegram:1", "a packing list for my beach trip", show)
        )
        await wait_until(lambda: steps, what="the build was queued")
        assert (await jobs.depths())["build"] == 1
        server.stop()
        server.start()  # back empty: the queued build is gone
        assert (await jobs.depths())["build"] == 0
        worker = Worker(
            server.url, tmp_path / "worker", queues="build", DATABASE_URL=f"sqlite:///{db}", **RULES_ONLY
        )
        worker.wait_ready()
        answer = await asyncio.wait_for(building, 60)  # before the build's own 90 s run out
        assert (answer.outcome, answer.retry_id) == ("built", None), answer
        assert "is ready" in answer.text
        [app] = await store.miniapps.list_apps("telegram:1", 5)  # built once
        assert answer.url is not None and answer.url.endswith(app.token)
        assert "its job was lost with the queue's data; sent again" in caplog.text
    finally:
        await jobs.close()
        if worker is not None:
            worker.kill()
        server.stop()
        await store.close()
