"""The sending side never subscribes to results (bot/jobs/result_backend.py): a real Redis of its own,
whose command counts are this test's alone."""

from __future__ import annotations

from pathlib import Path

import redis

from bot.core.jobs import JobRegistry
from bot.jobs.celery_runner import CeleryJobs
from tests.jobs.workerproc import RedisServer

SENT = 300


async def test_sending_jobs_subscribes_to_nothing_so_nothing_piles_up_unread(
    registry: JobRegistry, tmp_path: Path
) -> None:
    server = RedisServer(tmp_path / "redis").start()
    jobs = CeleryJobs.connect(server.url, registry)
    client = redis.Redis.from_url(server.url)
    try:
        for n in range(SENT):
            jobs.submit("kindred.test.echo", {"n": n})
        assert (await jobs.depths())["default"] == SENT
        # Stock Celery subscribes to each job's result channel as it sends it; nothing here reads
        # those confirmations, and Redis would hold them until it drops the client (32 MB).
        stats = client.info("commandstats")
        assert "cmdstat_subscribe" not in stats, stats.get("cmdstat_subscribe")
        assert all(c["sub"] == "0" and c["psub"] == "0" for c in client.client_list())
    finally:
        client.close()
        await jobs.close()
        server.stop()
