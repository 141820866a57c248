"""The nightly run end to end with real parts: rated replies in a real store, the real dataset,
one real KTO + LoRA training on a tiny model built from a config, the real scorer and gate, the
registry. A gate configured to accept anything shows the promotion path; a bar no adapter can
clear shows that a failed candidate never serves."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.errors import JobError
from bot.core.learning.dataset import DatasetPolicy
from bot.core.learning.gate import GatePolicy
from bot.core.learning.models import Variant
from bot.core.learning.nightly import PARTIAL_PREFIX, NightlyPolicy, run_nightly
from bot.core.store import Store
from bot.store.sqlite.store import SqliteStore
from bot.training.kto import LoraKtoTrainer
from bot.training.options import TrainingOptions
from bot.training.scorer import LoraScorer
from tests.support.learning import rated_replies
from tests.support.tiny_model import build_tiny_model

NOW = datetime(2026, 12, 1, 3, 30, tzinfo=UTC)
DATASET = DatasetPolicy(heldout_share=0.5)
# Accepts any candidate: every bound out of reach of a tiny random model.
LENIENT = GatePolicy(max_loss_rise=1e9, max_kl=1e9, sycophancy_alpha=0.0, sycophancy_max_extra=10**6)
# Refuses any candidate: no adapter lowers the regression loss by a billion nats.
STRICT = replace(LENIENT, max_loss_rise=-1e9)


def clock() -> datetime:
    return NOW


@pytest.fixture(scope="module")
def options(tmp_path_factory: pytest.TempPathFactory) -> TrainingOptions:
    data_dir = tmp_path_factory.mktemp("nightly-data")
    tiny = build_tiny_model(data_dir / "tiny", data_dir)
    return TrainingOptions(str(tiny), learning_rate=5e-3, max_steps=4, batch_size=4, device="cpu")


@pytest.fixture(scope="module")
def scorer(options: TrainingOptions) -> LoraScorer:
    return LoraScorer(options)


async def night(
    store: Store, options: TrainingOptions, scorer: LoraScorer, gate: GatePolicy, adapters: Path, key: str
) -> dict[str, object]:
    policy = NightlyPolicy(dataset=DATASET, gate=gate)
    return dict(
        await run_nightly(
            store, LoraKtoTrainer(options), scorer, policy, job_key=key, adapters_dir=adapters, clock=clock
        )
    )


async def test_a_night_trains_prescreens_registers_and_puts_its_candidate_on_trial(
    store: SqliteStore, options: TrainingOptions, scorer: LoraScorer, tmp_path: Path
) -> None:
    await rated_replies(store, 20, NOW - timedelta(days=1))
    adapters = tmp_path / "adapters"
    result = await night(store, options, scorer, LENIENT, adapters, "beat:1")

    # A night promotes nothing: its candidate answers a share of replies as the canary.
    assert result["status"] == "succeeded" and result["promoted"] is False
    assert await store.adapters.serving_adapter() is None
    candidate = await store.adapters.get_adapter(int(result["version"]))  # type: ignore[call-overload]
    assert candidate is not None and candidate.status == "candidate" and candidate.path == "v1"
    assert candidate.gate["passed"] is True
    assert set(candidate.gate["checks"]) >= {"heldout_margin", "sycophancy"}
    assert candidate.gate["checks"]["heldout_margin"]["gates"] is False  # reported, not gating
    assert candidate.dataset["examples"] == result["dataset"]["examples"]  # type: ignore[index]
    canary = await store.trials.running_canary()
    assert canary is not None and canary.id == result["canary"]
    assert (canary.candidate, canary.serving) == (Variant(candidate.version), Variant())
    assert canary.base_model == options.base_model and canary.share == 0.2
    assert (adapters / "v1" / "adapter_config.json").is_file()
    assert not list(adapters.glob(PARTIAL_PREFIX + "*"))  # renamed into place, nothing half-written left

    (run,) = await store.adapters.list_runs(5)
    assert (run.status, run.adapter_version, run.job_key) == ("succeeded", candidate.version, "beat:1")
    assert run.message == (
        f"v{candidate.version} passed its pre-screen; "
        f"adapter v{candidate.version} answers 20% of replies as canary {canary.id}"
    )
    losses = [step["loss"] for step in run.steps if "loss" in step]
    assert len(losses) == options.max_steps, run.steps
    assert [step["phase"] for step in run.steps if "phase" in step] == ["training", "gate"]
    snapshots = await store.learning.run_examples(run.id)
    assert len(snapshots) == 40 and {s.split for s in snapshots} == {"train", "heldout"}
    weights = result["weights"]
    assert isinstance(weights, dict) and min(weights.values()) >= 1.0

    # While that canary runs, a night trains nothing (docs/learning.md says why).
    again = await night(store, options, scorer, LENIENT, adapters, "beat:2")
    assert again["status"] == "skipped"
    assert again["message"] == f"canary {canary.id} is still on trial, so tonight trains nothing"
    assert len(await store.adapters.list_adapters()) == 1

    # The first job, delivered again after it ended (Redis gave it back when the worker's connection
    # dropped mid-run), answers with its run's result and trains nothing.
    redelivered = await night(store, options, scorer, LENIENT, adapters, "beat:1")
    assert redelivered == {**result, "message": run.message, "delivered_again": True}
    assert len(await store.adapters.list_runs(5)) == 2 and len(await store.adapters.list_adapters()) == 1


async def test_a_candidate_that_fails_the_prescreen_is_kept_as_failed_and_never_tried(
    store: SqliteStore, options: TrainingOptions, scorer: LoraScorer, tmp_path: Path
) -> None:
    await rated_replies(store, 20, NOW - timedelta(days=1))
    adapters = tmp_path / "adapters"
    result = await night(store, options, scorer, STRICT, adapters, "beat:1")

    assert result["status"] == "succeeded" and result["promoted"] is False and result["canary"] is None
    assert result["message"] == (
        f"v{result['version']} failed its pre-screen (regression_loss); "
        "nothing new passed its pre-screen, so nothing goes on trial"
    )
    failed = await store.adapters.get_adapter(int(result["version"]))  # type: ignore[call-overload]
    assert failed is not None and failed.status == "failed" and failed.gate["passed"] is False
    assert await store.adapters.serving_adapter() is None and await store.trials.running_canary() is None


async def test_too_few_rated_replies_is_a_skipped_night_not_an_error(
    any_store: Store, options: TrainingOptions, scorer: LoraScorer, tmp_path: Path
) -> None:
    await rated_replies(any_store, 2, NOW - timedelta(days=1))
    result = await night(any_store, options, scorer, LENIENT, tmp_path, "beat:1")
    assert result["status"] == "skipped"
    assert str(result["message"]).startswith("not enough data: ")
    (run,) = await any_store.adapters.list_runs(5)
    assert run.status == "skipped" and run.message == result["message"]
    assert await any_store.adapters.list_adapters() == []


async def test_a_second_run_while_one_runs_says_which_is_running(
    any_store: Store, options: TrainingOptions, scorer: LoraScorer, tmp_path: Path
) -> None:
    running = await any_store.adapters.start_run("beat:1", NOW, timedelta(hours=1))
    assert running is not None
    result = await night(any_store, options, scorer, LENIENT, tmp_path, "admin:telegram:1:x")
    assert result == {"status": "busy", "message": f"a training run is already running (run {running.id})"}
    assert [run.id for run in await any_store.adapters.list_runs(5)] == [running.id]


async def test_a_run_that_fails_is_recorded_failed_and_raises(
    store: SqliteStore, scorer: LoraScorer, tmp_path: Path
) -> None:
    await rated_replies(store, 20, NOW - timedelta(days=1))
    missing = TrainingOptions(str(tmp_path / "no-such-model"), batch_size=4, device="cpu")
    with pytest.raises(JobError, match="training run 1 failed: "):
        await night(store, missing, scorer, LENIENT, tmp_path / "adapters", "beat:1")
    (run,) = await store.adapters.list_runs(5)
    assert run.status == "failed" and run.message and "no-such-model" in run.message
    assert await store.adapters.list_adapters() == [] and not (tmp_path / "adapters" / "v1").exists()
