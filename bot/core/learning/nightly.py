"""The nightly run ([learning], [canary]): the night's dataset, one LoRA adapter trained by KTO from
the base model and a reward model trained on the same reactions, each through its pre-screen (safety
only: core/learning/gate.py, core/learning/rm_screen.py), the registry, and a canary for what passed
(core/learning/trial.py). Nothing serves everyone from a night: people's reactions to the canary's
replies decide (core/learning/canary.py). While a canary runs, a night trains nothing.

One run at a time: the store refuses a second start while one runs (a "busy" result, not an
error). A run whose worker was killed stays `running` until the redelivered job (the same job
key) or the next start after `stale_after` marks it failed; the adapter is trained in a hidden
folder and renamed into place only when whole, so a killed run never leaves files that look like
an adapter, and an adapter is registered only after its gate: never two serving, never a half one.

The trainer and the scorer are blocking (torch); they run on a thread. Their progress reaches the
store from that thread through the event loop (`log_run_step`, also the run's heartbeat).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.errors import JobError
from bot.core.jobs import report_progress
from bot.core.learning.dataset import Dataset, DatasetPolicy, build_dataset
from bot.core.learning.gate import GatePolicy, GateReport, evaluate_candidate
from bot.core.learning.models import GLOBAL_SCOPE, AdapterRecord, NewAdapter, RewardModelRecord, TrainingRun
from bot.core.learning.ports import AdapterScorer, Trainer
from bot.core.learning.reward import RewardWeights
from bot.core.learning.runs import busy_result, ended_run
from bot.core.learning.stale_adapter import retire_outdated
from bot.core.learning.trial import RerankParts, TrialPolicy, put_on_trial, reward_model_step
from bot.core.models import JSONObject
from bot.core.store import Store

log = logging.getLogger(__name__)

NIGHTLY_JOB = "kindred.training.nightly"
# Hidden folders (a leading dot is never an adapter name): a run's adapter while it is written.
PARTIAL_PREFIX = ".partial-run"
# How long the training thread waits for one progress step to be stored before it goes on.
STEP_WRITE_S = 30.0
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class NightlyPolicy:
    """What a night trains on, how a candidate is judged, and when a silent run counts as dead."""

    dataset: DatasetPolicy = field(default_factory=DatasetPolicy)
    reward: RewardWeights = field(default_factory=RewardWeights)
    gate: GatePolicy = field(default_factory=GatePolicy)
    stale_after: timedelta = timedelta(hours=1)
    scope: str = GLOBAL_SCOPE
    trial: TrialPolicy = field(default_factory=TrialPolicy)
    # The model replies come from, which a canary's variant is for ("": the trainer's).
    base_model: str = ""
    # Seconds the training thread waits after each progress step: tests use it to catch a run
    # mid-way (as `generate_job`'s pace_s); 0 in production.
    pace_s: float = 0.0


class RunStopped(Exception):
    """Raised in the training thread by the progress callback once the run was cancelled."""


@dataclass(frozen=True, slots=True)
class NightParts:
    """What trains and judges: the adapter's trainer and scorer (None where replies come from a
    server that cannot serve an adapter), and the reward model's parts (None: no reward model)."""

    trainer: Trainer | None
    scorer: AdapterScorer | None
    rerank: RerankParts | None = None


async def run_nightly(
    store: Store,
    trainer: Trainer | None,
    scorer: AdapterScorer | None,
    policy: NightlyPolicy,
    *,
    job_key: str,
    adapters_dir: Path,
    clock: Clock = utc_now,
    rerank: RerankParts | None = None,
) -> JSONObject:
    """Run one night. Returns a JSON result whose `status` is succeeded, skipped (not enough data,
    or a canary running) or busy (another run is running); a run that fails is recorded failed and
    raises JobError with the error's text. A job delivered again after its run ended (Redis
    hands a job back when a worker's connection drops mid-run, and the worker that finished it
    could not acknowledge it then) returns that run's result: a night never trains twice."""
    ended = await ended_run(store, job_key)
    if ended is not None:
        log.warning("job %s was delivered again after its run %d ended %s: not run twice", job_key, ended.id,
                    ended.status)  # fmt: skip
        return {**ended.result, "status": ended.status, "message": ended.message, "delivered_again": True}
    run = await store.adapters.start_run(job_key, clock(), policy.stale_after)
    if run is None:
        return await busy_result(store)
    parts = NightParts(trainer, scorer, rerank)
    try:
        return await _run(store, parts, policy, run, adapters_dir, clock)
    except (Exception, asyncio.CancelledError) as exc:
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        log.error("training run %d failed: %s", run.id, message)
        await _finish_failed(store, run, message, clock)
        if isinstance(exc, asyncio.CancelledError):
            raise  # the time limit: the runner turns it into JobTimeout
        raise JobError(f"training run {run.id} failed: {message}") from exc


async def _finish_failed(store: Store, run: TrainingRun, message: str, clock: Clock) -> None:
    try:
        await store.adapters.finish_run(run.id, "failed", message, clock(), result={"status": "failed"})
    except Exception as exc:  # the store itself may be why the run failed; the next start cleans up
        log.warning("training run %d could not be marked failed: %s", run.id, exc)


async def _run(
    store: Store,
    parts: NightParts,
    policy: NightlyPolicy,
    run: TrainingRun,
    adapters_dir: Path,
    clock: Clock,
) -> JSONObject:
    canary = await store.trials.running_canary()
    if canary is not None:
        reason = f"canary {canary.id} is still on trial, so tonight trains nothing"
        return await _skip(store, run, None, reason, clock, None)
    retired = await retire_outdated(store, policy.scope, policy.dataset, clock())
    if retired is not None:
        await store.adapters.log_run_step(run.id, {"phase": "retired", "message": retired}, clock())
    dataset = await build_dataset(store, policy.dataset, policy.reward, clock())
    shortfall = dataset.shortfall(policy.dataset)
    if shortfall is not None:
        return await _skip(store, run, dataset, shortfall, clock, retired)
    await store.learning.record_examples(run.id, dataset.snapshots)
    adapter = report = metrics = None
    if policy.trial.trains_adapter and parts.trainer is not None and parts.scorer is not None:
        adapter, report, metrics = await _adapter(
            store, parts.trainer, parts.scorer, policy, run, dataset, adapters_dir, clock
        )
    reward_model = None
    if policy.trial.trains_reward_model and parts.rerank is not None:
        await store.adapters.log_run_step(run.id, {"phase": "reward_model"}, clock())
        examples = (*dataset.train, *dataset.heldout)
        trained, usable = await reward_model_step(
            store, parts.rerank, examples, policy.trial, policy.gate, run.id, clock()
        )
        if usable:
            reward_model = trained
        else:
            log.info("reward model r%d is not used: %s", trained.version, trained.report.get("message", ""))
    return await _conclude(
        store, run, dataset, policy, parts, adapter, report, metrics, reward_model, clock, retired
    )


async def _adapter(
    store: Store,
    trainer: Trainer,
    scorer: AdapterScorer,
    policy: NightlyPolicy,
    run: TrainingRun,
    dataset: Dataset,
    adapters_dir: Path,
    clock: Clock,
) -> tuple[AdapterRecord, GateReport, JSONObject]:
    """Train tonight's adapter, pre-screen it, register it (candidate or failed)."""
    log.info(
        "training run %d: %d examples; class weights desirable %.3f, undesirable %.3f",
        run.id,
        len(dataset.train),
        dataset.desirable_weight,
        dataset.undesirable_weight,
    )
    steps = StepLog(store, run.id, clock, asyncio.get_running_loop(), policy.pace_s)
    partial = _partial_folder(adapters_dir, run.id)
    await steps.note({"phase": "training", "examples": len(dataset.train), "weights": weights(dataset)})
    try:
        metrics = await asyncio.to_thread(
            trainer.train,
            dataset.train,
            partial,
            steps.progress,
            desirable_weight=dataset.desirable_weight,
            undesirable_weight=dataset.undesirable_weight,
        )
    finally:
        steps.stopped = True  # a thread still training after a cancel stops at its next step
    name = await publish(store, adapters_dir, partial, policy.scope)
    serving = await store.adapters.serving_adapter(policy.scope)
    await steps.note({"phase": "gate", "candidate": name})
    report = await asyncio.to_thread(
        evaluate_candidate,
        scorer,
        adapters_dir / name,
        adapters_dir / serving.path if serving is not None else None,
        dataset.heldout,
        policy.gate,
    )
    record = await _register(store, trainer, policy, run, dataset, name, metrics, report)
    return record, report, metrics


async def _skip(
    store: Store, run: TrainingRun, dataset: Dataset | None, reason: str, clock: Clock, retired: str | None
) -> JSONObject:
    message = reason
    if dataset is not None and not reason.lower().startswith("not enough data"):
        message = f"not enough data: {reason}"
    if retired is not None:
        message = f"{message}; {retired}, so the base model serves"
    result: JSONObject = {
        "status": "skipped",
        "run": run.id,
        "message": message,
        "dataset": {} if dataset is None else dataset.stats,
        "retired": retired,
    }
    await store.adapters.finish_run(run.id, "skipped", message, clock(), result=result)
    log.info("training run %d skipped: %s", run.id, message)
    return result


def weights(dataset: Dataset) -> JSONObject:
    return {"desirable": dataset.desirable_weight, "undesirable": dataset.undesirable_weight}


async def _register(
    store: Store,
    trainer: Trainer,
    policy: NightlyPolicy,
    run: TrainingRun,
    dataset: Dataset,
    name: str,
    metrics: JSONObject,
    report: GateReport,
) -> AdapterRecord:
    return await store.adapters.add_adapter(
        NewAdapter(
            scope=policy.scope,
            base_model=trainer.base_model,
            path=name,
            window_start=dataset.window_start,
            window_end=dataset.window_end,
            status="candidate" if report.passed else "failed",
            run_id=run.id,
            dataset=dataset.stats,
            metrics=metrics,
            gate=report.as_json(),
        )
    )


async def _conclude(
    store: Store,
    run: TrainingRun,
    dataset: Dataset,
    policy: NightlyPolicy,
    parts: NightParts,
    adapter: AdapterRecord | None,
    report: GateReport | None,
    metrics: JSONObject | None,
    reward_model: RewardModelRecord | None,
    clock: Clock,
    retired: str | None,
) -> JSONObject:
    passed = adapter if adapter is not None and report is not None and report.passed else None
    base_model = policy.base_model or (parts.trainer.base_model if parts.trainer is not None else "")
    canary, trial = await put_on_trial(
        store, base_model, passed, reward_model, policy.trial, run_id=run.id, now=clock()
    )
    said = []
    if adapter is not None and report is not None:
        if report.passed:
            said.append(f"v{adapter.version} passed its pre-screen")
        else:
            failed = ", ".join(failed_checks(report.as_json())) or "a check"
            said.append(f"v{adapter.version} failed its pre-screen ({failed})")
    if reward_model is not None:
        said.append(f"reward model r{reward_model.version} may serve")
    message = "; ".join([*said, trial])
    result: JSONObject = {
        "status": "succeeded",
        "run": run.id,
        "version": None if adapter is None else adapter.version,
        "promoted": False,  # a night promotes nothing: its canary's test does
        "canary": None if canary is None else canary.id,
        "reward_model": None if reward_model is None else reward_model.version,
        "message": message,
        "dataset": dataset.stats,
        "weights": weights(dataset),
        "metrics": metrics or {},
        "gate": {} if report is None else report.as_json(),
        "retired": retired,
    }
    version = None if adapter is None else adapter.version
    await store.adapters.finish_run(
        run.id, "succeeded", message, clock(), result=result, adapter_version=version
    )
    log.info("training run %d: %s", run.id, message)
    return result


def failed_checks(report: JSONObject) -> list[str]:
    """The names of the gating checks that did not pass, from a gate report's JSON (a check
    marked "gates": false is reported only)."""
    checks: Any = report.get("checks", report)
    items = checks.items() if isinstance(checks, dict) else ((c.get("name"), c) for c in checks or ())
    return [
        str(name)
        for name, check in items
        if isinstance(check, dict) and check.get("passed") is False and check.get("gates") is not False
    ]


def _partial_folder(adapters_dir: Path, run_id: int) -> Path:
    """An empty hidden folder for this run's files; any left by an earlier run (one at a time:
    their run is over) go first."""
    adapters_dir.mkdir(parents=True, exist_ok=True)
    for old in adapters_dir.glob(PARTIAL_PREFIX + "*"):
        shutil.rmtree(old, ignore_errors=True)
    return adapters_dir / f"{PARTIAL_PREFIX}{run_id}"


async def publish(store: Store, adapters_dir: Path, partial: Path, scope: str) -> str:
    """Rename a finished adapter into place as `v<next version>` and return that name.

    The next version is the registry's largest plus one (one run at a time, so nobody else adds
    one now). A folder of that name that no version names is what a run killed between renaming
    and registering left: it is replaced. One that a version names is skipped."""
    known = await store.adapters.list_adapters(scope)
    taken = {record.path for record in known}
    number = max((record.version for record in known), default=0) + 1
    while f"v{number}" in taken:
        number += 1
    name = f"v{number}"
    await asyncio.to_thread(_move_into_place, partial, adapters_dir / name)
    return name


def _move_into_place(partial: Path, target: Path) -> None:
    if target.exists():
        log.warning("adapter folder %s is not registered (a run killed mid-way); replacing it", target.name)
        shutil.rmtree(target)
    partial.rename(target)  # one rename: readers see no folder, or the whole adapter


class StepLog:
    """Progress from the training thread to the store, in order: each step waits (briefly) for
    its write on the event loop, so the run's heartbeat is real, and a cancelled run stops."""

    def __init__(
        self, store: Store, run_id: int, clock: Clock, loop: asyncio.AbstractEventLoop, pace_s: float
    ) -> None:
        self._store = store
        self._run_id = run_id
        self._clock = clock
        self._loop = loop
        self._pace_s = pace_s
        self.stopped = False

    async def note(self, step: JSONObject) -> None:
        await self._store.adapters.log_run_step(self._run_id, step, self._clock())

    def progress(self, step: JSONObject) -> None:
        """Called by the trainer on its thread, once per logged step."""
        if self.stopped:
            raise RunStopped(f"training run {self._run_id} was stopped")
        self._wait(self.note(dict(step)))
        report_progress({"run": self._run_id, **step})
        if self._pace_s > 0:
            time.sleep(self._pace_s)

    def _wait(self, write: Coroutine[Any, Any, None]) -> None:
        try:
            asyncio.run_coroutine_threadsafe(write, self._loop).result(STEP_WRITE_S)
        except Exception as exc:  # a lost step is not worth a lost night
            log.warning("training run %d: a progress step was not stored: %s", self._run_id, exc)
