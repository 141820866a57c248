"""`kindred.proactive.beat` as `kindred run` runs it without a broker: the in-process schedule
submits it on its crontab's minutes, once each, and the job (built by `job_registry` from the
settings) opens the store and python-telegram-bot's `Bot` for the loopback Bot API, sends the
reminder that is due, and loads no language model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.chat.ports import Inference
from bot.core.errors import JobError
from bot.core.jobs import JobId, JobPayload
from bot.core.loading import LoadOnce
from bot.core.proactive.models import NewReminder
from bot.jobs.inprocess import InProcessJobs
from bot.jobs.schedule import InProcessSchedule
from bot.wiring.backends import open_store
from bot.wiring.jobs import job_registry
from bot.wiring.memory_jobs import Models
from bot.wiring.proactive_jobs import BEAT_JOB, reachable
from bot.wiring.schedule import schedule_entries
from bot.wiring.settings import GeneralSettings, Settings, TelegramSettings
from tests.support.fakes import HashEmbedder
from tests.support.telegram_api import DEFAULT_TOKEN, FakeTelegramBotApi

ANN = 1001


def no_model() -> Inference:
    raise AssertionError("the beat loaded a language model")


@pytest.fixture
async def api() -> AsyncIterator[FakeTelegramBotApi]:
    async with FakeTelegramBotApi() as fake:
        yield fake


@pytest.fixture
def settings(tmp_path: Path, api: FakeTelegramBotApi) -> Settings:
    telegram = TelegramSettings(TELEGRAM_BOT_TOKEN=DEFAULT_TOKEN, TELEGRAM_API_BASE_URL=api.base_url)
    return Settings(general=GeneralSettings(data_dir=tmp_path), telegram=telegram)


@pytest.fixture
async def jobs(settings: Settings) -> AsyncIterator[InProcessJobs]:
    running = InProcessJobs(job_registry(settings, Models(LoadOnce(HashEmbedder), LoadOnce(no_model))))
    yield running
    await running.close()


async def due_reminder(settings: Settings, due: datetime) -> None:
    store = await open_store(settings)
    try:
        person = f"telegram:{ANN}"
        await store.proactive.add_reminder(NewReminder(person, person, "take the cake out", due, "UTC", due))
    finally:
        await store.close()


async def test_the_schedule_submits_the_beat_once_a_due_minute_and_it_sends_the_reminder(
    settings: Settings, jobs: InProcessJobs, api: FakeTelegramBotApi
) -> None:
    await due_reminder(settings, datetime.now(UTC) - timedelta(minutes=1))
    submitted: list[tuple[str, JobId]] = []

    def submit(name: str, payload: JobPayload) -> JobId:
        job_id = jobs.submit(name, payload)
        submitted.append((name, job_id))
        return job_id

    schedule = InProcessSchedule(schedule_entries(settings.workers, settings.training), submit)
    assert schedule.tick(datetime(2026, 12, 1, 12, 4, 30, tzinfo=UTC)) == []  # */5: not at 12:04
    assert schedule.tick(datetime(2026, 12, 1, 12, 5, tzinfo=UTC)) == ["proactive-beat"]
    assert schedule.tick(datetime(2026, 12, 1, 12, 5, 40, tzinfo=UTC)) == []  # that minute is done
    [(name, job_id)] = submitted
    result = await jobs.result(job_id, 20.0)
    assert name == BEAT_JOB and (result["people"], result["sent"]) == (1, 1)
    assert [m.text for m in api.bot_messages(ANN)] == [
        "Reminder: take the cake out\n\nWhy I'm writing: You asked me to remind you."
    ]


async def test_the_job_takes_a_simulated_clock_and_refuses_a_bad_one(
    settings: Settings, jobs: InProcessJobs, api: FakeTelegramBotApi
) -> None:
    later = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
    await due_reminder(settings, later)
    early = await jobs.result(
        jobs.submit(BEAT_JOB, {"now": (later - timedelta(minutes=1)).isoformat()}), 20.0
    )
    assert early["people"] == 0 and api.calls == []  # nothing due yet: not even a login
    done = await jobs.result(jobs.submit(BEAT_JOB, {"now": later.isoformat()}), 20.0)
    assert done["sent"] == 1
    with pytest.raises(JobError, match="UTC offset"):
        await jobs.result(jobs.submit(BEAT_JOB, {"now": "2030-01-01T09:00:00"}), 20.0)


def test_only_platforms_with_a_token_are_reachable() -> None:
    settings = Settings(telegram=TelegramSettings(TELEGRAM_BOT_TOKEN="123:abc"))
    can = reachable(settings)
    assert can("telegram:5") and not can("discord:5") and not can("ann")
