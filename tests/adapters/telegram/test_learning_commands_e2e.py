"""The admins' /train_now, /rollback and /canary [stop], and /privacy training on|off, through a real
python-telegram-bot Application against the loopback Bot API, on each store: the same core code
as the CLI, refused to anyone who is not an admin.

/train_now queues the real `kindred.training.nightly` job on the in-process runner; the store
holds no rated replies, so the run it starts is skipped at once ("not enough data") and no
model is ever loaded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.chat.access import Access
from bot.core.jobs import JobRegistry
from bot.core.learning.commands import CANARY_USAGE, TrainingCommands
from bot.core.learning.models import GLOBAL_SCOPE, NewAdapter, NewCanary, Variant
from bot.core.learning.serving import promote
from bot.core.memory.controls import (
    PRIVACY,
    PRIVACY_USAGE,
    TRAINING_OFF,
    TRAINING_ON,
    files_setting,
    training_setting,
)
from bot.core.store import Store
from bot.jobs.inprocess import InProcessJobs
from bot.wiring.job_store import per_job
from bot.wiring.settings import GeneralSettings, Settings, StoreSettings
from bot.wiring.training_jobs import nightly_job
from tests.adapters.telegram.conftest import ANN, running_bot
from tests.support.places import open_place, place_url
from tests.support.telegram_api import FakeTelegramBotApi

BOB = 5151
ADMIN = Access(admins=frozenset({f"telegram:{ANN}"}))
T0 = datetime(2026, 12, 1, 3, 30, tzinfo=UTC)


@pytest.fixture
async def jobs(tmp_path: Path, place: str) -> AsyncIterator[InProcessJobs]:
    """The nightly job on in-process threads, over the bot's own database."""
    settings = Settings(
        general=GeneralSettings(data_dir=tmp_path / "data"),
        store=StoreSettings(DATABASE_URL=place_url(place)),
    )

    async def opener() -> Store:
        return await open_place(place)

    registry = JobRegistry()
    registry.add(nightly_job(settings, per_job(opener)))
    runner = InProcessJobs(registry, workers=1)
    yield runner
    await runner.close()


def commands(jobs: InProcessJobs) -> Callable[[Store], TrainingCommands]:
    return lambda store: TrainingCommands(store, jobs.submit, start_wait_s=10.0)


async def test_train_now_names_the_running_run_or_starts_one(
    api: FakeTelegramBotApi, tmp_path: Path, place: str, jobs: InProcessJobs
) -> None:
    async with running_bot(api, tmp_path, access=ADMIN, training=commands(jobs), place=place) as bot:
        busy = await bot.store.adapters.start_run("beat:tonight", datetime.now(UTC), timedelta(hours=1))
        assert busy is not None
        api.private_message(ANN, "/train_now")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        assert api.texts(ANN)[0] == f"A training run is already running (run {busy.id})."

        await bot.store.adapters.finish_run(busy.id, "succeeded", "done", datetime.now(UTC))
        api.private_message(ANN, "/train_now")
        await api.wait_until(lambda: len(api.texts(ANN)) == 2, 20.0)
        answer = api.texts(ANN)[1]
        runs = await bot.store.adapters.list_runs(5)
        assert len(runs) == 2 and runs[0].job_key.startswith(f"admin:telegram:{ANN}:")
        assert answer == f"Training run {runs[0].id} ended at once: {runs[0].message}"
        assert runs[0].status == "skipped" and runs[0].message.startswith("not enough data")


async def test_rollback_answers_which_version_serves_now(
    api: FakeTelegramBotApi, tmp_path: Path, place: str, jobs: InProcessJobs
) -> None:
    async with running_bot(api, tmp_path, access=ADMIN, training=commands(jobs), place=place) as bot:
        versions = []
        for path in ("v1", "v2"):
            record = await bot.store.adapters.add_adapter(
                NewAdapter(GLOBAL_SCOPE, "tiny", path, T0 - timedelta(days=14), T0)
            )
            await promote(bot.store.adapters, record.version, T0)
            versions.append(record.version)
        for _ in range(3):
            api.private_message(ANN, "/rollback")
        await api.wait_until(lambda: len(api.texts(ANN)) == 3)
        v1, v2 = versions
        assert api.texts(ANN) == [
            f"Rolled back: v{v1} serves now (before: v{v2}).",
            f"Rolled back: the base model serves now (before: v{v1}).",
            "Nothing to roll back: the base model already serves.",
        ]
        assert await bot.store.adapters.serving_adapter() is None


async def test_learning_commands_are_for_admins_only(
    api: FakeTelegramBotApi, tmp_path: Path, place: str, jobs: InProcessJobs
) -> None:
    async with running_bot(api, tmp_path, access=ADMIN, training=commands(jobs), place=place) as bot:
        record = await bot.store.adapters.add_adapter(NewAdapter(GLOBAL_SCOPE, "tiny", "v1", T0, T0))
        await promote(bot.store.adapters, record.version, T0)
        for command in ("/train_now", "/rollback"):
            api.private_message(BOB, command)
        await api.wait_until(lambda: len(api.texts(BOB)) == 2)
        assert api.texts(BOB) == ["That command is for Kindred's admins."] * 2
        assert await bot.store.adapters.list_runs(5) == []
        serving = await bot.store.adapters.serving_adapter()
        assert serving is not None and serving.version == record.version


async def test_without_learning_wired_the_admin_is_told(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path, access=ADMIN):
        api.private_message(ANN, "/rollback")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        assert api.texts(ANN) == ["Learning is not set up in this Kindred."]


async def test_privacy_training_off_and_on_is_kept_per_person(
    api: FakeTelegramBotApi, tmp_path: Path, place: str
) -> None:
    commands = ("/privacy training off", "/privacy", "/privacy training on", "/privacy training maybe")
    async with running_bot(api, tmp_path, place=place) as bot:
        for count, command in enumerate(commands, start=1):
            api.private_message(ANN, command)
            await api.wait_until(lambda n=count: len(api.texts(ANN)) == n)
            if command == "/privacy training off":
                assert await bot.store.learning.training_consent(f"telegram:{ANN}") is False
        off, shown, on, usage = api.texts(ANN)
        assert off == TRAINING_OFF and on == TRAINING_ON and usage == PRIVACY_USAGE
        assert shown == f"{PRIVACY}\n\n{training_setting(False, True)}\n{files_setting(False)}"
        assert await bot.store.learning.training_consent(f"telegram:{ANN}") is True
        assert await bot.store.learning.training_consent(f"telegram:{BOB}") is None


async def test_canary_shows_the_trial_and_stop_ends_it_for_admins_only(
    api: FakeTelegramBotApi, tmp_path: Path, place: str, jobs: InProcessJobs
) -> None:
    """[canary]: /canary says what is on trial, /canary stop ends it (the serving variant stays),
    and anyone else gets the answer every admin command gives them."""
    async with running_bot(api, tmp_path, access=ADMIN, training=commands(jobs), place=place) as bot:
        api.private_message(ANN, "/canary")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        assert api.texts(ANN)[0] == "No canary is running, and none has run yet."
        canary = await bot.store.trials.start_canary(
            NewCanary("tiny", Variant(4), Variant(), 0.2, 1, {"alpha": 0.01}), T0
        )
        assert canary is not None
        for command in ("/canary", "/canary stop", "/canary"):
            api.private_message(BOB, command)
        await api.wait_until(lambda: len(api.texts(BOB)) == 3)
        assert api.texts(BOB) == ["That command is for Kindred's admins."] * 3
        assert await bot.store.trials.running_canary() == canary

        commands_sent = ("/canary", "/canary stop too many complaints", "/canary stop", "/canary maybe")
        for count, command in enumerate(commands_sent, start=2):
            api.private_message(ANN, command)
            await api.wait_until(lambda n=count: len(api.texts(ANN)) == n)
        _, shown, stopped, again, usage = api.texts(ANN)
        assert shown.startswith(f"Canary {canary.id} is running since 2026-12-01 03:30 UTC: adapter v4")
        assert shown.endswith("/canary stop stops it; the serving variant keeps serving.")
        assert stopped == f"Stopped canary {canary.id} (adapter v4); the base model keeps serving."
        assert again == "No canary is running: nothing to stop."
        assert usage == CANARY_USAGE
        decided = await bot.store.trials.get_canary(canary.id)
        assert decided is not None and decided.status == "stopped"
        assert decided.reason == f"stopped by an admin (telegram:{ANN}): too many complaints"
        assert await bot.store.adapters.serving_adapter() is None
