"""What a worker process holds, and for how long, with real Celery workers on the tests' Redis:
- one event loop and one store (on PostgreSQL one pool) per process, whatever its pool, for every
  task it runs (workers/process.py, bot/wiring/job_store.py);
- no migrations at task time: a store behind the schema refuses its jobs until `kindred migrate`;
- a job that kills its worker is given up after KINDRED_JOB_MAX_WORKER_DEATHS deaths, recorded
  FAILURE with the reason, and runs again only through `kindred requeue`.

Each test has its own Redis database, so the session's worker (tests/jobs/conftest.py) takes none
of these jobs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from bot.core.errors import JobError
from bot.core.jobs import JobRegistry
from bot.jobs.celery_runner import CeleryJobs, make_app
from bot.store.sqlite.store import SqliteStore
from bot.wiring.job_store import OPENED
from bot.wiring.settings import Settings
from tests.jobs.sample_jobs import sample_registry
from tests.jobs.workerproc import ROOT, TEST_REDIS_DB, Worker, flush, redis_url, worker_env
from tests.support.pg import PgServer, as_url, migrated_database
from tests.support.waiting import wait_until

pytestmark = pytest.mark.procs

TASKS = 20
STORE_JOB = "kindred.test.store_user_count"
KILL_JOB = "kindred.test.kill_worker"


@pytest.fixture
def registry() -> JobRegistry:
    """The submitting side's: the jobs' names and queues."""
    return sample_registry(Settings())


@pytest.fixture
def url() -> Iterator[str]:
    own = redis_url(TEST_REDIS_DB + 1)
    flush(own)
    yield own
    flush(own)


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def opened_in(log: str) -> Counter[int]:
    """How often each process of the worker opened its store, from the worker's own log."""
    prefix = OPENED.split("%d")[0]
    return Counter(int(line.split(prefix)[1].split()[0]) for line in log.splitlines() if prefix in line)


async def sessions(dsn: str) -> int:
    """Sessions PostgreSQL has started for this database (its statistics lag up to a second)."""
    await asyncio.sleep(1.2)
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
        )
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


def kindred(command: list[str], url: str, data_dir: Path, database_url: str) -> str:
    """`kindred …` as an admin runs it, with the workers' settings; its output."""
    env = worker_env(url, data_dir, {"DATABASE_URL": database_url})
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", *command],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.pg
@pytest.mark.parametrize("pool", ["prefork", "solo", "threads"])
async def test_many_tasks_in_a_worker_process_share_one_store_and_one_pool(
    tmp_path: Path, url: str, registry: JobRegistry, pg_server: PgServer, pool: str
) -> None:
    dsn = await migrated_database(pg_server)
    concurrency = 1 if pool == "solo" else 2
    worker = Worker(url, tmp_path / pool, pool=pool, concurrency=concurrency, DATABASE_URL=as_url(dsn))
    jobs = CeleryJobs.connect(url, registry)
    try:
        worker.wait_ready()
        before = await sessions(dsn)
        ids = [jobs.submit(STORE_JOB, {}) for _ in range(TASKS)]
        results = [await jobs.result(job_id, 60) for job_id in ids]
        opened = await sessions(dsn) - before
        log = worker.log()
    finally:
        await jobs.close()
        worker.kill()
    pids = {result["pid"] for result in results}
    assert len(pids) <= concurrency if pool == "prefork" else pids == {worker.proc.pid}
    # Each process that ran a task opened its store once, whichever of its tasks came first.
    assert opened_in(log) == dict.fromkeys(pids, 1)
    # One pool per process (a connection or two each), not one per task (2 sessions each before);
    # the two reads of the count are sessions too.
    assert opened <= 2 * concurrency * len(pids) + 2, opened


async def test_a_worker_on_a_store_behind_the_schema_refuses_its_jobs_until_kindred_migrate(
    tmp_path: Path, url: str, registry: JobRegistry
) -> None:
    db = tmp_path / "kindred.db"
    database_url = f"sqlite:///{db}"
    worker = Worker(url, tmp_path / "worker", DATABASE_URL=database_url)
    jobs = CeleryJobs.connect(url, registry)
    try:
        worker.wait_ready()
        with pytest.raises(JobError, match=r"schema is behind .*run `kindred migrate`"):
            await jobs.result(jobs.submit(STORE_JOB, {}), 30)
        assert await jobs.result(jobs.submit("kindred.test.echo", {"n": 1}), 30) == {"n": 1}  # no store

        assert "applied" in kindred(["migrate"], url, tmp_path / "cli", database_url)
        done = await jobs.result(jobs.submit(STORE_JOB, {}), 30)
        assert done == {"users": 0, "pid": worker.proc.pid}  # the same worker, not restarted
    finally:
        await jobs.close()
        worker.kill()
    store = await SqliteStore.open(db, migrate=False)
    try:
        assert await store.migrate() == []  # the worker migrated nothing itself; the CLI did all
    finally:
        await store.close()


async def test_a_job_that_kills_its_prefork_child_is_given_up_after_two_deaths_until_requeued(
    tmp_path: Path, url: str, registry: JobRegistry
) -> None:
    """Prefork: the parent sees its child die and requeues the job at once (reject on worker lost)."""
    counter = tmp_path / "attempts"
    worker = Worker(url, tmp_path / "worker", pool="prefork", concurrency=1)
    jobs = CeleryJobs.connect(url, registry)
    try:
        worker.wait_ready()
        job_id = jobs.submit(KILL_JOB, {"counter": str(counter), "kills": 3})
        with pytest.raises(JobError, match=r"given up: its worker died 2 times .*kindred requeue"):
            await jobs.result(job_id, 60)
        assert lines(counter) == 2  # run twice, killed twice, the third delivery refused
        recorded = make_app(url, registry).AsyncResult(job_id)
        assert recorded.state == "FAILURE" and "KINDRED_JOB_MAX_WORKER_DEATHS=2" in str(recorded.result)
        await asyncio.sleep(2)
        assert lines(counter) == 2  # not run again by itself

        out = kindred(["requeue", job_id], url, tmp_path / "cli", f"sqlite:///{tmp_path / 'x.db'}")
        assert KILL_JOB in out
        # Killed once more (its count starts afresh), then the fourth attempt lives.
        assert await jobs.result(job_id, 60) == {"attempts": 4}
    finally:
        await jobs.close()
        worker.kill()


async def test_a_job_that_kills_its_whole_solo_worker_is_given_up_after_two_deaths(
    tmp_path: Path, url: str, registry: JobRegistry
) -> None:
    """Solo: the whole worker dies with the job unacknowledged; each replacement reclaims it after the
    (short, here) visibility timeout, as a supervisor's restarted worker would."""
    counter = tmp_path / "attempts"
    started: list[Worker] = []

    def start() -> Worker:
        worker = Worker(url, tmp_path / f"worker{len(started)}", KINDRED_VISIBILITY_TIMEOUT_S="2")
        started.append(worker)
        return worker

    jobs = CeleryJobs.connect(url, registry)
    recorded = make_app(url, registry).AsyncResult
    try:
        start().wait_ready()
        job_id = jobs.submit(KILL_JOB, {"counter": str(counter), "kills": 5})

        async def ended() -> bool:
            if started[-1].proc.poll() is not None:
                start()  # the supervisor's restart
            return recorded(job_id).state == "FAILURE"

        await wait_until(ended, within_s=90, what="the job given up")
        assert lines(counter) == 2 and len(started) == 3
        assert "its worker died 2 times" in str(recorded(job_id).result)
        await asyncio.sleep(3)
        assert lines(counter) == 2 and started[-1].proc.poll() is None  # the last worker lives on
    finally:
        await jobs.close()
        for worker in started:
            worker.kill()
