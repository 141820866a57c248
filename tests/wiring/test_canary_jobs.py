"""The canary's wiring ([canary]): what a night trains on each backend, the settings that reach the
canary's policy, and the `kindred.learning.canary` job run from the registry on a real SQLite store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.jobs import run_attempt
from bot.core.learning.canary import CANARY_JOB, start
from bot.core.learning.models import NewAdapter, Variant
from bot.wiring.backends import open_store
from bot.wiring.canary_jobs import learner, trial_policy
from bot.wiring.jobs import job_registry
from bot.wiring.schedule import schedule_entries
from bot.wiring.settings import GeneralSettings, InferenceSettings, Settings
from bot.wiring.settings.training import TrainingSettings

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


def test_each_backend_learns_what_it_can_serve() -> None:
    local = Settings(inference=InferenceSettings(KINDRED_INFERENCE_BACKEND="local"))  # type: ignore[call-arg]
    server = {"KINDRED_INFERENCE_BACKEND": "openai", "openai_base_url": "http://x/v1", "openai_model": "m"}
    hosted = Settings(inference=InferenceSettings(**server))  # type: ignore[arg-type]
    vllm = Settings(inference=InferenceSettings(**server, load_lora=True))  # type: ignore[arg-type]
    assert [learner(s) for s in (local, hosted, vllm)] == ["both", "rerank", "both"]
    chosen = Settings(training=TrainingSettings(learner="lora"), inference=hosted.inference)
    assert learner(chosen) == "lora"


def test_the_settings_reach_the_canary_and_beat() -> None:
    training = TrainingSettings(
        canary_share=0.5,
        canary_alpha=0.05,
        canary_settle_minutes=30,
        canary_per_person_daily=5,
        best_of=8,
    )
    policy = trial_policy(Settings(training=training))
    assert (policy.best_of, policy.canary.share, policy.canary.alpha) == (8, 0.5, 0.05)
    assert policy.canary.settle == timedelta(minutes=30) and policy.canary.per_person_daily == 5
    names = [e.name for e in schedule_entries(Settings().workers, training)]
    assert "canary" in names
    off = schedule_entries(Settings().workers, TrainingSettings(enabled=False))
    assert "canary" not in [e.name for e in off]


async def test_the_canary_job_stops_a_canary_whose_adapter_folder_is_gone(tmp_path: Path) -> None:
    settings = Settings(general=GeneralSettings(data_dir=tmp_path))
    store = await open_store(settings)
    try:
        record = await store.adapters.add_adapter(NewAdapter("global", "bundled", "v1", T0, T0))
        policy = trial_policy(settings).canary
        canary = await start(store, "bundled", Variant(record.version), Variant(), policy, seed=1, at=T0)
        assert canary is not None
    finally:
        await store.close()
    job = job_registry(settings).get(CANARY_JOB)
    done = await run_attempt(job, {"now": (T0 + timedelta(hours=1)).isoformat()})
    assert done["decision"] == "stopped" and "missing" in str(done["reason"])
    (settings.adapters_path / "v1").mkdir(parents=True)  # a later canary with its files is left running
    store = await open_store(settings)
    try:
        second = await start(store, "bundled", Variant(record.version), Variant(), policy, seed=2, at=T0)
        assert second is not None
    finally:
        await store.close()
    again = await run_attempt(job, {"now": (T0 + timedelta(hours=1)).isoformat()})
    assert again["decision"] is None and again["canary"] is not None
