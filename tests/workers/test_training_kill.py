"""The nightly training job on a real `train` worker (a real Celery process, Redis, each store, the
tiny model, real KTO steps), SIGKILLed mid-run and redelivered: the dead run is recorded failed, the
redelivered one succeeds, and exactly one adapter version is put on trial, as exactly one canary.

Sent as beat sends it, with an empty payload: the run is keyed by the Celery task id, which the
redelivered job keeps, so its start fails the dead run ("delivered again") and starts cleanly.
Redis hands an unacknowledged job to another worker only after the visibility timeout (in
production longer than the job's hard limit, hours). The replacement worker here runs with a
2-second one (KINDRED_VISIBILITY_TIMEOUT_S, as in tests/jobs/test_reliability.py) so that it
reclaims the killed worker's job at once; the first worker keeps the default, so nothing reclaims
the job while it still runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.learning.models import Variant
from bot.core.learning.nightly import NIGHTLY_JOB, PARTIAL_PREFIX
from bot.jobs.celery_runner import CeleryJobs, make_app
from bot.wiring.jobs import job_registry
from bot.wiring.settings import Settings
from tests.jobs.workerproc import TEST_REDIS_DB, Worker, flush, redis_url
from tests.support.learning import rated_replies
from tests.support.places import open_place, place_url
from tests.support.tiny_model import build_tiny_model
from tests.support.waiting import wait_until

pytestmark = pytest.mark.procs

STEPS = 6
PACE_S = "1.0"
SHORT_VISIBILITY_S = "2"


def training_env(tmp_path: Path, place: str, tiny: Path) -> dict[str, str]:
    """Both workers share one database and one adapters folder; a pre-screen that accepts any
    candidate, so that the run that finishes starts a canary (what is tested is the kill, not the
    pre-screen), and an adapter alone (the reward model has its own tests)."""
    return {
        "DATABASE_URL": place_url(place),
        "KINDRED_ADAPTERS_DIR": str(tmp_path / "adapters"),
        "KINDRED_MODEL": str(tiny),
        "KINDRED_TRAIN_MAX_STEPS": str(STEPS),
        "KINDRED_TRAIN_BATCH_SIZE": "4",
        "KINDRED_TRAIN_LEARNING_RATE": "0.005",
        "KINDRED_TRAIN_DEVICE": "cpu",
        "KINDRED_TRAIN_HELDOUT_SHARE": "0.5",
        "KINDRED_TRAIN_GATE_MAX_LOSS_RISE": "1e9",
        "KINDRED_TRAIN_GATE_MAX_KL": "1e9",
        "KINDRED_TRAIN_GATE_SYCOPHANCY_ALPHA": "0",
        "KINDRED_TRAIN_GATE_SYCOPHANCY_MAX_EXTRA": "1000000",
        "KINDRED_TEST_TRAIN_PACE_S": PACE_S,
        "KINDRED_TRAIN_LEARNER": "lora",
        "TQDM_DISABLE": "1",
    }


async def mid_run(place: str) -> bool:
    """A run is running and has logged at least one training step."""
    store = await open_place(place)
    try:
        runs = await store.adapters.list_runs(5)
    finally:
        await store.close()
    return bool(runs) and runs[0].status == "running" and any("loss" in s for s in runs[0].steps)


async def test_a_training_worker_killed_mid_run_leaves_one_failed_run_and_one_canary(
    tmp_path: Path, place: str
) -> None:
    tiny = build_tiny_model(tmp_path / "tiny")
    store = await open_place(place)
    await rated_replies(store, 20, datetime.now(UTC) - timedelta(days=1))
    await store.close()

    url = redis_url(TEST_REDIS_DB + 1)  # its own database: no other worker may take the job
    flush(url)
    env = training_env(tmp_path, place, tiny)
    app = "tests.workers.training_worker_app"
    first = Worker(url, tmp_path / "first", queues="train", app=app, **env)
    second: Worker | None = None
    jobs = CeleryJobs.connect(url, job_registry(Settings()))  # the submitting side: names and queues
    try:
        first.wait_ready()
        job_id = jobs.submit(NIGHTLY_JOB, {})
        await wait_until(lambda: mid_run(place), within_s=120, what="a run mid-way through its steps")
        # Flower reads the task's state: each logged step is there as PROGRESS, with its loss.
        task = make_app(url, job_registry(Settings())).AsyncResult(job_id)
        await wait_until(lambda: task.state == "PROGRESS", within_s=30, what="progress in the task state")
        assert "loss" in task.info and task.info["run"] >= 1
        first.kill()  # SIGKILL: no ack, no cleanup, the run left "running"

        # The replacement needs no pace: nothing kills it, it only has to finish the redelivered run.
        short = {"KINDRED_VISIBILITY_TIMEOUT_S": SHORT_VISIBILITY_S, "KINDRED_TEST_TRAIN_PACE_S": "0"}
        second = Worker(url, tmp_path / "second", queues="train", app=app, **{**env, **short})
        result = await jobs.result(job_id, 240)
    finally:
        first.kill()
        if second is not None:
            second.kill()
        await jobs.close()
        flush(url)

    assert result["status"] == "succeeded" and result["promoted"] is False, result
    store = await open_place(place)
    try:
        runs = await store.adapters.list_runs(10)
        adapters = await store.adapters.list_adapters()
        canaries = await store.trials.list_canaries(10)
    finally:
        await store.close()
    assert [(c.id, c.status, c.candidate) for c in canaries] == [
        (result["canary"], "running", Variant(result["version"]))  # type: ignore[arg-type]
    ]
    assert [(run.status, run.job_key) for run in runs] == [("succeeded", job_id), ("failed", job_id)]
    assert "delivered again" in runs[1].message
    assert [(a.version, a.status, a.path) for a in adapters] == [(result["version"], "candidate", "v1")]
    assert runs[0].adapter_version == result["version"] and runs[1].adapter_version is None
    folder = tmp_path / "adapters"
    assert sorted(p.name for p in folder.iterdir()) == ["v1"]  # the dead run's half adapter is gone
    assert not list(folder.glob(PARTIAL_PREFIX + "*"))
    assert (folder / "v1" / "adapter_config.json").is_file()
