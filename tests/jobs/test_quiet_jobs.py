"""A job that keeps no result (JobSpec.keep_result=False: memory extraction, one a message) leaves
no record in Redis when it succeeds, where Celery would keep each for a day (`result_expires`):
at 50 messages a second, ~2.8 GB. Its failure is kept, for Flower and whoever asks. A real Celery
worker (the session's) on the tests' Redis."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from bot.core.errors import JobError
from bot.core.jobs import JobRegistry
from bot.jobs.celery_runner import CeleryJobs
from bot.wiring.memory_jobs import EXTRACT_JOB
from tests.jobs.workerproc import Worker
from tests.support.waiting import wait_until

pytestmark = pytest.mark.procs

RECORD = "celery-task-meta-{}"


def test_memory_extraction_keeps_no_result(registry: JobRegistry) -> None:
    assert registry.get(EXTRACT_JOB).spec.keep_result is False


async def test_a_quiet_job_leaves_no_record_but_its_failure_does(
    registry: JobRegistry, session_redis: str, worker: Worker, tmp_path: Path
) -> None:
    jobs = CeleryJobs.connect(session_redis, registry)
    client = redis.Redis.from_url(session_redis)
    counter = tmp_path / "ran"
    try:
        done = jobs.submit("kindred.test.quiet", {"counter": str(counter)})
        await wait_until(counter.exists, 20, what="the quiet job run")
        failed = jobs.submit("kindred.test.quiet", {"fail": True})
        with pytest.raises(JobError, match="quiet job failed as asked"):
            await jobs.result(failed, 20)
        # The failure came after the success on the one worker: the success's record would be there.
        assert client.exists(RECORD.format(failed)) and not client.exists(RECORD.format(done))
        assert client.keys(f"kindred:job:queued:{done}") == []
    finally:
        client.close()
        await jobs.close()
