"""What a Celery worker costs per task, apart from the task's own work: an empty job on the GPU queue.

    python -m bench.worker_overhead [--quick] [--tasks 300] [--store postgres|sqlite] [--pool threads]

Starts a private `redis-server`, PostgreSQL + pgvector (the embedded server, or --database-url /
$BENCH_DATABASE_URL) with a fresh database migrated once, and one worker as `kindred worker --queues
gpu` runs it (the threads pool), whose app adds `kindred.inference.empty`
(bench/parts/overhead/worker.py): a job that takes the store as every store job does and returns.
Jobs are sent one at a time. Reported, after a short warm-up:
- `task`: Celery's own runtime of each task, from the worker's log ("succeeded in …s"): the event
  loop, the store, the attempt policy. The target is p95 ≤ 20 ms (issue [steady]).
- `round_trip`: from sending the job to its result, as the sender sees it (Redis both ways).
- `pg_sessions_opened`: sessions PostgreSQL started for the database during the run
  (`pg_stat_database.sessions`): one pool per task, or one per worker process.
Progress goes to stderr; stdout carries one JSON object, last.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg

from bench.parts.common import (
    exit_cleanly_on_sigterm,
    fresh_database,
    log,
    machine,
    millis,
    now_iso,
    postgres_server,
)
from bench.parts.overhead.worker import EMPTY_JOB
from bot.core.jobs import JobRegistry
from bot.jobs.celery_runner import make_app
from tests.jobs.workerproc import ROOT, RedisServer, worker_env
from tests.support.pg import as_url

TARGET_P95_MS = 20.0
WARM_UP = 5
READY_TIMEOUT_S = 90.0
RESULT_TIMEOUT_S = 60.0
SUCCEEDED = re.compile(r"Task " + re.escape(EMPTY_JOB) + r"\[([0-9a-f-]+)\] succeeded in ([0-9.e-]+)s")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.worker_overhead", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 tasks: a smoke run")
    parser.add_argument("--tasks", type=int, default=300, help="jobs sent, one at a time")
    parser.add_argument("--store", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--pool", default="threads", help="the GPU worker's pool (kindred worker's default)")
    parser.add_argument("--concurrency", type=int, default=4, help="the pool's threads or processes")
    parser.add_argument("--database-url", help="a PostgreSQL server that may create databases")
    args = parser.parse_args(argv)
    if args.quick:
        args.tasks = 30
    return args


@asynccontextmanager
async def database(args: argparse.Namespace, folder: Path) -> AsyncIterator[str | None]:
    """The store's DATABASE_URL, migrated once (as `kindred migrate` does before the workers)."""
    if args.store == "sqlite":
        from bot.store.sqlite.store import SqliteStore

        await (await SqliteStore.open(folder / "kindred.db")).close()
        yield f"sqlite:///{folder / 'kindred.db'}"
        return
    async with postgres_server(args.database_url) as server, fresh_database(server) as dsn:
        from bot.store.postgres.store import PostgresStore

        await (await PostgresStore.open(dsn, min_size=1, max_size=1)).close()
        yield dsn


async def sessions(dsn: str | None) -> int | None:
    """Sessions PostgreSQL has started for this database so far (PostgreSQL 14 and later)."""
    if dsn is None or dsn.startswith("sqlite:"):
        return None
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
        )
        row = await cursor.fetchone()
    return int(row[0]) if row else None


def start_worker(
    args: argparse.Namespace, redis_url: str, url: str, folder: Path
) -> tuple[subprocess.Popen[bytes], Path]:
    log_path = folder / "worker.log"
    command = [
        sys.executable, "-m", "celery", "-A", "bench.parts.overhead.worker", "worker",
        "--queues", "gpu", "--pool", args.pool, "--concurrency", str(args.concurrency),
        "--hostname", "overhead@%h", "--loglevel", "INFO",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
    ]  # fmt: skip
    env = worker_env(redis_url, folder, {"DATABASE_URL": url})
    with log_path.open("wb") as out:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    began = time.monotonic()
    while " ready." not in log_path.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() - began > READY_TIMEOUT_S:
            proc.kill()
            raise SystemExit(f"the worker did not start:\n{log_path.read_text(errors='replace')[-3000:]}")
        time.sleep(0.1)
    return proc, log_path


def send_all(redis_url: str, tasks: int) -> tuple[list[str], list[float]]:
    """Each job sent after the previous one's result: ids, and each round trip in seconds."""
    app = make_app(redis_url, JobRegistry(), 60.0)
    ids: list[str] = []
    trips: list[float] = []
    try:
        for _ in range(tasks):
            began = time.perf_counter()
            sent = app.send_task(EMPTY_JOB, args=({},), queue="gpu")
            sent.get(timeout=RESULT_TIMEOUT_S)
            trips.append(time.perf_counter() - began)
            ids.append(sent.id)
    finally:
        app.close()
    return ids, trips


def task_times(log_path: Path, ids: list[str]) -> list[float]:
    """Celery's runtime of each task, in the order sent."""
    found = {m[1]: float(m[2]) for m in SUCCEEDED.finditer(log_path.read_text(errors="replace"))}
    missing = [task_id for task_id in ids if task_id not in found]
    if missing:
        raise SystemExit(f"{len(missing)} tasks have no 'succeeded' line in the worker's log")
    return [found[task_id] for task_id in ids]


async def measure(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    redis = RedisServer(folder / "redis").start()
    try:
        async with database(args, folder) as dsn:
            assert dsn is not None
            url = dsn if dsn.startswith("sqlite:") else as_url(dsn)
            before = await sessions(dsn)
            proc, log_path = start_worker(args, redis.url, url, folder)
            try:
                log(f"worker ready; sending {args.tasks + WARM_UP} jobs one at a time")
                ids, trips = await asyncio.to_thread(send_all, redis.url, args.tasks + WARM_UP)
                await asyncio.sleep(1.5)  # the last log line, and PostgreSQL's statistics
                times = task_times(log_path, ids)
                opened = await sessions(dsn)
            finally:
                proc.kill()
                proc.wait(timeout=30)
    finally:
        redis.stop()
    task = millis(times[WARM_UP:])
    return {
        "benchmark": "worker_overhead",
        "date": now_iso(),
        "settings": {
            "tasks": args.tasks,
            "warm_up": WARM_UP,
            "store": args.store,
            "pool": args.pool,
            "concurrency": args.concurrency,
            "quick": args.quick,
        },
        "machine": machine(),
        "task": task,
        "round_trip": millis(trips[WARM_UP:]),
        "pg_sessions_opened": None if before is None or opened is None else opened - before,
        "target_p95_ms": TARGET_P95_MS,
        "met": task["p95_ms"] <= TARGET_P95_MS,
    }


def main() -> None:
    exit_cleanly_on_sigterm()
    args = parse()
    with tempfile.TemporaryDirectory(prefix="kindred-overhead-") as folder:
        result = asyncio.run(measure(args, Path(folder)))
    task = result["task"]
    log(f"task p50 {task['p50_ms']} ms, p95 {task['p95_ms']} ms; sessions {result['pg_sessions_opened']}")
    print(json.dumps(result, indent=2))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
