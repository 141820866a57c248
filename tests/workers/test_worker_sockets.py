"""`kindred worker` as compose runs it keeps no more sockets with each restart of Redis: with
Celery's gossip on, every restart left one more connection in CLOSE_WAIT in the worker's main
process (the long soak's worker and trainer fds 35 → 39 and 29 → 34). A real worker on a Redis of
its own, restarted four times, answering a ping after each (bot/cli/workers.py: QUIET)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
import redis
from celery import Celery

from bot.core.jobs import JobRegistry
from bot.jobs.celery_runner import make_app
from tests.jobs.workerproc import ROOT, RedisServer, worker_env
from tests.support.waiting import wait_until

pytestmark = pytest.mark.procs

RESTARTS = 3


def stale(pid: int, port: int) -> list[str]:
    """The process's connections to `port` that the server closed and the process kept."""
    held = psutil.Process(pid).net_connections(kind="tcp")
    return [
        f"{c.laddr.port}: {c.status}"
        for c in held
        if c.raddr and c.raddr.port == port and c.status != "ESTABLISHED"
    ]


def kindred_worker(redis: RedisServer, folder: Path) -> subprocess.Popen[bytes]:
    """`kindred worker --queues default`, its output in folder/worker.log."""
    command = [sys.executable, "-m", "bot.cli", "worker", "--queues", "default", "--concurrency", "1"]
    env = worker_env(redis.url, folder / "data", {"KINDRED_LOG_LEVEL": "INFO"})
    with (folder / "worker.log").open("wb") as log:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


async def answers(app: Celery) -> bool:
    """Whether the worker answers a ping: its consumer is back on Redis, not only connected."""
    try:
        return bool(await asyncio.to_thread(app.control.ping, timeout=0.5))
    except (OSError, redis.RedisError):  # Redis still starting, or the ping's connection was the old one
        return False


async def restart(redis: RedisServer, app: Celery, n: int) -> None:
    redis.stop()
    redis.start()  # on the same port, empty
    await wait_until(lambda: answers(app), 60, what=f"the worker answering after restart {n}")


async def test_restarts_of_redis_leave_the_worker_no_more_sockets(tmp_path: Path) -> None:
    """Measured from the first restart on: one socket of the first connection may stay in
    CLOSE_WAIT (kombu's), but none more with each restart."""
    redis = RedisServer(tmp_path / "redis").start()
    worker = kindred_worker(redis, tmp_path)
    app = make_app(redis.url, JobRegistry())
    try:
        await wait_until(lambda: answers(app), 60, what="the worker answering")
        await restart(redis, app, 1)
        fds, kept = psutil.Process(worker.pid).num_fds(), stale(worker.pid, redis.port)
        for n in range(2, RESTARTS + 2):
            await restart(redis, app, n)
        assert len(stale(worker.pid, redis.port)) <= len(kept), stale(worker.pid, redis.port)
        assert psutil.Process(worker.pid).num_fds() <= fds, "an fd more with each restart"
    finally:
        app.close()
        worker.kill()
        worker.wait(timeout=10)
        redis.stop()
