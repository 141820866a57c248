"""The proactive beat on real Celery workers (Redis, SQLite, python-telegram-bot's `Bot` against
the loopback Bot API), the worker SIGKILLed after the platform took the message but before it
heard so: the redelivered job (acks late, the same task) finds the key claimed in the ledger and
sends nothing, so the person has one message, never two.

The replacement worker runs with a 2-second visibility timeout so that it reclaims the killed
worker's job at once (as in test_training_kill.py); the first keeps the default."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.jobs.celery_runner import CeleryJobs
from bot.store.sqlite.store import SqliteStore
from bot.wiring.jobs import job_registry
from bot.wiring.proactive_jobs import BEAT_JOB
from bot.wiring.settings import Settings
from tests.jobs.workerproc import TEST_REDIS_DB, Worker, flush, redis_url
from tests.support import proactive
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.waiting import wait_until

pytestmark = pytest.mark.procs

ANN = 1001
NOW = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)  # the job's simulated clock: 15:00 in Berlin


async def test_a_beat_worker_killed_while_sending_leaves_one_message_and_its_redelivery_none(
    tmp_path: Path,
) -> None:
    db = tmp_path / "kindred.db"
    store = await SqliteStore.open(db)
    person = f"telegram:{ANN}"
    await proactive.working_for_hours(store, person, 3.5, NOW)
    await proactive.opt_in(store, person, NOW)
    await store.close()
    url = redis_url(TEST_REDIS_DB + 1)  # its own database: the session's `default` worker takes jobs
    flush(url)
    first: Worker | None = None
    second: Worker | None = None
    jobs = CeleryJobs.connect(url, job_registry(Settings()))
    async with FakeTelegramBotApi() as api:
        env = {
            "DATABASE_URL": f"sqlite:///{db}",
            "TELEGRAM_BOT_TOKEN": api.token,
            "TELEGRAM_API_BASE_URL": api.base_url,
        }
        api.hold_sends()
        try:
            first = Worker(url, tmp_path / "first", app="workers.app", **env)
            job_id = jobs.submit(BEAT_JOB, {"now": NOW.isoformat()})
            await wait_until(lambda: bool(api.calls_of("sendMessage")), within_s=60, what="the send")
            first.kill()  # SIGKILL: the message is with Telegram, the ledger row still "claimed"
            second = Worker(
                url, tmp_path / "second", app="workers.app", KINDRED_VISIBILITY_TIMEOUT_S="2", **env
            )
            result = await jobs.result(job_id, 120)
        finally:
            api.release_sends()
            for worker in (first, second):
                if worker is not None:
                    worker.kill()
            await jobs.close()
            flush(url)
        # The claimed key is in the person's ledger: the redelivered beat does not even choose it.
        assert (result["evaluated"], result["chosen"], result["sent"]) == (1, 0, 0), result
        assert len(api.calls_of("sendMessage")) == 1 and len(api.bot_messages(ANN)) == 1
    store = await SqliteStore.open(db)
    try:
        [row] = await store.proactive.sent_messages(person, NOW - timedelta(days=1))
        assert (row.trigger, row.status) == ("long_session", "claimed")
    finally:
        await store.close()
