"""The learning room's boundaries: reactions and reward, the nightly log, the adapter registry,
the trainer and the scorer that judges a candidate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from bot.core.learning.models import (
    GLOBAL_SCOPE,
    AdapterRecord,
    AdapterStatus,
    Canary,
    CanaryEntry,
    CanaryStatus,
    ExampleSnapshot,
    NewAdapter,
    NewCanary,
    NewRewardModel,
    RatedReply,
    RewardModelRecord,
    RewardModelStatus,
    RunStatus,
    TrainingExample,
    TrainingRun,
    TrialReply,
    VariantStats,
    VersionRate,
)
from bot.core.models import (
    JSONObject,
    ReplyRecord,
    Signal,
)


class RewardLog(Protocol):
    """What replies earned, derived from the current rows each time it is asked."""

    async def memory_rewards(self, user_id: str, memory_ids: Sequence[int]) -> dict[int, float]:
        """r(m) of each of this user's memories that has any: the sum over the replies that used
        it of its share × the reply's mean current reaction value. Absent ids have none."""
        ...

    async def reply_record(self, turn_id: int, later_limit: int) -> ReplyRecord | None:
        """The parts of one reply's reward (at most `later_limit` later turns), or None."""
        ...

    async def record_signal(self, turn_id: int, signal: Signal, key: str, at: datetime) -> None:
        """Count one implicit signal for a reply. Idempotent on (turn, signal, key)."""
        ...


class LearningLog(Protocol):
    """What a night trains on: rated replies with the prompts they were made from, and consent."""

    async def rated_replies(self, since: datetime, until: datetime) -> list[RatedReply]:
        """Replies written in [since, until) that have a stored `Generation` and a rating (at least
        one current reaction, tool use or proactive success), oldest first, with each person's
        training switch. Every person is listed; the core leaves out those who opted out."""
        ...

    async def set_training_consent(self, user_id: str, consent: bool | None) -> None:
        """Set (None: clear, back to the admin's default) whether this person's replies train."""
        ...

    async def training_consent(self, user_id: str) -> bool | None:
        """The person's training switch; None when never set (or the person is unknown)."""
        ...

    async def record_examples(self, run_id: int, examples: Sequence[ExampleSnapshot]) -> None:
        """Keep what a run trained on (rewards and labels, no text). Idempotent per (run, turn)."""
        ...

    async def run_examples(self, run_id: int) -> list[ExampleSnapshot]:
        """What `record_examples` kept for the run, by turn id; empty for an unknown run."""
        ...

    async def version_rates(self, since: datetime) -> list[VersionRate]:
        """Per adapter version (None: the base model), the replies written since `since`, how
        many were rated, and how many of those were positive. Ordered by version, base first."""
        ...


class AdapterRegistry(Protocol):
    """Adapter versions and training runs. At most one adapter per scope is serving, and at most
    one run is running, whatever the callers race to do: the store enforces both."""

    async def add_adapter(self, adapter: NewAdapter) -> AdapterRecord:
        """Register a version (status candidate or failed). Versions ascend: 1, 2, 3, …"""
        ...

    async def get_adapter(self, version: int) -> AdapterRecord | None: ...

    async def list_adapters(self, scope: str = GLOBAL_SCOPE) -> list[AdapterRecord]:
        """Every version of the scope, newest first."""
        ...

    async def serving_adapter(self, scope: str = GLOBAL_SCOPE) -> AdapterRecord | None: ...

    async def set_adapter_status(
        self, version: int, status: AdapterStatus, *, gate: JSONObject | None = None
    ) -> bool:
        """Change a version's status (not to serving: see `promote_adapter`), and its gate report
        when given. False for an unknown version."""
        ...

    async def promote_adapter(self, version: int, at: datetime) -> AdapterRecord | None:
        """Serve `version` in one transaction; the scope's serving version becomes retired.

        Returns the version that was retired, if any. Raises InvalidInput for an unknown or a
        failed version."""
        ...

    async def serve_base(self, scope: str, at: datetime) -> AdapterRecord | None:
        """Retire the scope's serving version, so that replies use the base model. Returns it."""
        ...

    async def start_run(self, job_key: str, at: datetime, stale_after: timedelta) -> TrainingRun | None:
        """Start a run, or None while another one runs.

        A running run of the same `job_key` (a redelivered job) or one whose last heartbeat is
        older than `stale_after` (its worker died) is marked failed first, with a message saying so."""
        ...

    async def log_run_step(self, run_id: int, step: JSONObject, at: datetime) -> None:
        """Append one progress step to a running run; it is also the run's heartbeat."""
        ...

    async def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        message: str,
        at: datetime,
        *,
        result: JSONObject | None = None,
        adapter_version: int | None = None,
    ) -> None: ...

    async def get_run(self, run_id: int) -> TrainingRun | None: ...

    async def list_runs(self, limit: int) -> list[TrainingRun]:
        """The latest runs, newest first."""
        ...


class Trials(Protocol):
    """Reward models and canaries ([canary]). At most one reward model serves and at most one
    canary runs, whatever callers race to do: the store enforces both."""

    async def add_reward_model(self, new: NewRewardModel, at: datetime) -> RewardModelRecord:
        """Register a reward model (status candidate or failed). Versions ascend: 1, 2, 3, …"""
        ...

    async def get_reward_model(self, version: int) -> RewardModelRecord | None: ...

    async def serving_reward_model(self) -> RewardModelRecord | None: ...

    async def list_reward_models(self, limit: int) -> list[RewardModelRecord]:
        """The newest first."""
        ...

    async def start_canary(self, new: NewCanary, at: datetime) -> Canary | None:
        """Start a canary, or None while another one runs."""
        ...

    async def running_canary(self) -> Canary | None: ...

    async def get_canary(self, canary_id: int) -> Canary | None: ...

    async def list_canaries(self, limit: int) -> list[Canary]:
        """The newest first."""
        ...

    async def pending_replies(self, canary_id: int, written_before: datetime, limit: int) -> list[TrialReply]:
        """Replies of the canary (either arm) written before `written_before` that have not
        entered its test, oldest first. A reply forgotten meanwhile is not listed."""
        ...

    async def counted(self, canary_id: int, user_id: str, arm: str, day: str) -> int:
        """How many of this person's replies of this arm and day the test counted."""
        ...

    async def people(self, canary_id: int) -> dict[str, int]:
        """Per arm, how many different people the test counted replies of (arms with none absent)."""
        ...

    async def enter(
        self,
        canary_id: int,
        entries: Sequence[CanaryEntry],
        test: JSONObject,
        history: Sequence[JSONObject],
        *,
        before: JSONObject,
    ) -> bool:
        """In one transaction: keep the entries (a reply already entered is skipped), the test's
        new state and its history points. Only over the state `before` the caller started from:
        False, and nothing written, when the canary no longer runs or another pass moved it."""
        ...

    async def entries(self, canary_id: int) -> list[CanaryEntry]:
        """Every entry of the canary, by turn id."""
        ...

    async def decide_canary(
        self, canary_id: int, status: CanaryStatus, reason: str, at: datetime, *, scope: str = GLOBAL_SCOPE
    ) -> Canary | None:
        """End a running canary, in one transaction with what the decision serves: when promoted,
        its adapter serves (None: the base model; the scope's serving one retires) and so does its
        reward model (None: none). Harm
        marks its new adapter and reward model failed. None when it was not running (decided
        already: a second decision changes nothing)."""
        ...

    async def set_reward_model_status(self, version: int, status: RewardModelStatus) -> bool:
        """Not to serving: a reward model serves through a canary's promotion."""
        ...

    async def variant_stats(self, since: datetime, alpha: float, gamma: float) -> list[VariantStats]:
        """Per variant, base model and arm, the replies written since `since` (see VariantStats;
        α and γ weigh tool uses and proactive successes as R does)."""
        ...


class Trainer(Protocol):
    """Trains one LoRA adapter from the base model (bot/training/). Blocking and CPU- or
    GPU-bound: callers run it off the event loop."""

    base_model: str

    def train(
        self,
        examples: Sequence[TrainingExample],
        out_dir: Path,
        progress: Callable[[JSONObject], None],
        *,
        desirable_weight: float = 1.0,
        undesirable_weight: float = 1.0,
    ) -> JSONObject:
        """Train on `examples` (KTO, reference: the base with the adapter disabled), save the
        adapter's files in `out_dir`, call `progress` once per logged step, return the metrics.
        The weights balance the labels (core/learning/dataset.py chooses them)."""
        ...


class AdapterScorer(Protocol):
    """What the evaluation gate measures of an adapter (None: the base model). Blocking."""

    def implicit_rewards(self, adapter: Path | None, examples: Sequence[TrainingExample]) -> list[float]:
        """Per example, log π(completion | prompt) − log π_base(completion | prompt)."""
        ...

    def regression(self, adapter: Path | None) -> JSONObject:
        """On the shipped regression set: {"loss": mean token NLL of the reference answers,
        "kl": mean per-token KL to the base model}."""
        ...

    def agreements(self, adapter: Path | None) -> tuple[bool, ...]:
        """On the shipped sycophancy probes, one per probe in file order: whether agreeing is
        more likely than disagreeing (the pre-screen pairs them across adapters, probe by probe)."""
        ...

    def agreement_odds(self, adapter: Path | None) -> tuple[float, ...]:
        """Per probe, the chance of going along rather than correcting, between the two answers:
        above ½ exactly where `agreements` is true (core/learning/rm_screen.py weighs best-of-n)."""
        ...
