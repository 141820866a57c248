"""One contract for both job runners: each case runs in-process and on a real Celery worker."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from bot.core.errors import JobError, JobTimeout
from bot.core.jobs import JobProgress, Jobs

WAIT_S = 20.0


def attempts(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


async def test_a_job_returns_its_result(jobs: Jobs) -> None:
    job_id = jobs.submit("kindred.test.echo", {"user": "ann", "ids": [1, 2], "note": "é ✓"})
    assert await jobs.result(job_id, WAIT_S) == {"user": "ann", "ids": [1, 2], "note": "é ✓"}


async def test_many_jobs_each_get_their_own_result(jobs: Jobs) -> None:
    ids = [jobs.submit("kindred.test.echo", {"n": n}) for n in range(8)]
    results = await asyncio.gather(*(jobs.result(job_id, WAIT_S) for job_id in ids))
    assert results == [{"n": n} for n in range(8)]


async def test_a_failing_job_fails_once_with_its_error_text(jobs: Jobs, tmp_path: Path) -> None:
    counter = tmp_path / "attempts"
    job_id = jobs.submit("kindred.test.add", {"a": 1, "b": "x", "counter": str(counter)})
    with pytest.raises(JobError, match=r"kindred\.test\.add failed: TypeError: .*str"):
        await jobs.result(job_id, WAIT_S)
    assert attempts(counter) == 1  # retries=3, but a bad payload is not worth retrying


async def test_a_transient_error_is_retried_until_the_job_succeeds(jobs: Jobs, tmp_path: Path) -> None:
    counter = tmp_path / "attempts"
    job_id = jobs.submit("kindred.test.flaky", {"failures": 2, "counter": str(counter)})
    assert await jobs.result(job_id, WAIT_S) == {"attempts": 3}


async def test_retries_run_out_and_the_last_error_is_reported(jobs: Jobs, tmp_path: Path) -> None:
    counter = tmp_path / "attempts"
    job_id = jobs.submit("kindred.test.flaky", {"failures": 99, "counter": str(counter)})
    with pytest.raises(JobError, match="StoreUnavailable: store away on attempt 4"):
        await jobs.result(job_id, WAIT_S)
    assert attempts(counter) == 4  # the first run and its 3 retries


async def test_a_job_past_its_soft_limit_is_stopped(jobs: Jobs) -> None:
    started = time.monotonic()
    job_id = jobs.submit("kindred.test.sleep", {"seconds": 30})
    with pytest.raises(JobTimeout, match="past its time limit of 1 s"):
        await jobs.result(job_id, WAIT_S)
    assert time.monotonic() - started < 10


async def test_waiting_less_than_the_job_takes_times_out_and_the_result_still_comes(jobs: Jobs) -> None:
    job_id = jobs.submit("kindred.test.sleep", {"seconds": 0.6})
    with pytest.raises(JobTimeout, match="no result within"):
        await jobs.result(job_id, 0.1)
    assert await jobs.result(job_id, WAIT_S) == {"slept": 0.6}


async def test_an_unknown_job_or_a_payload_json_cannot_carry_is_refused_at_submit(jobs: Jobs) -> None:
    with pytest.raises(JobError, match="no job is named"):
        jobs.submit("kindred.test.nothing", {})
    with pytest.raises(JobError, match="must be JSON"):
        jobs.submit("kindred.test.echo", {"when": object()})
    with pytest.raises(JobError, match="must be JSON"):
        jobs.submit("kindred.test.echo", {"x": float("nan")})


async def test_store_upkeep_runs_on_the_configured_store(jobs: Jobs) -> None:
    job_id = jobs.submit("kindred.store.upkeep", {})
    assert await jobs.result(job_id, WAIT_S) == {
        "backend": "sqlite",
        "done": ["PRAGMA optimize", "PRAGMA wal_checkpoint(TRUNCATE)"],
    }


async def test_queue_depths_name_every_queue(jobs: Jobs) -> None:
    depths = await jobs.depths()
    assert set(depths) == {"gpu", "train", "build", "default"}
    assert all(isinstance(n, int) and n >= 0 for n in depths.values())


async def test_a_running_jobs_progress_is_read_until_it_ends(jobs: Jobs, tmp_path: Path) -> None:
    assert isinstance(jobs, JobProgress)
    release = tmp_path / "release"
    job_id = jobs.submit("kindred.test.progress", {"n": 3, "release": str(release)})
    seen = None
    for _ in range(400):
        seen = await jobs.progress(job_id)
        if seen is not None:
            break
        await asyncio.sleep(0.025)
    assert seen == {"step": "halfway", "n": 3}
    release.touch()
    assert await jobs.result(job_id, WAIT_S) == {"done": True}
    assert await jobs.progress(job_id) is None, "an ended job has no progress"
