"""Value types of learning ([learning]): how a reply was made, the nightly dataset, adapter
versions and training runs. They cross the ports (`LearningLog`, `AdapterRegistry`) and the
trainer's boundary (`Trainer`, `AdapterScorer`), so they hold plain data only: no torch here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bot.core.models import ChatMessage, Generation, JSONObject

# candidate: trained, not (yet) serving. serving: what replies use now (at most one per scope).
# retired: served before; a rollback may serve it again. failed: the gate or the run rejected it.
AdapterStatus = Literal["candidate", "serving", "retired", "failed"]
# running: started and not finished (a killed worker leaves one; the next start fails it).
RunStatus = Literal["running", "succeeded", "failed", "skipped"]
# The one scope today. Per-person adapters (a later issue) use the person's user id as scope.
GLOBAL_SCOPE = "global"


@dataclass(frozen=True, slots=True)
class RatedReply:
    """A stored reply with its prompt, in a training window, that has a rating: at least one
    reaction, tool use or proactive outcome. The reward's parts come from `reply_reward`."""

    turn_id: int
    user_id: str
    created_at: datetime
    completion: str
    generation: Generation
    # The person's training switch (/privacy training on|off); None: never set, the admin's default.
    consent: bool | None


@dataclass(frozen=True, slots=True)
class TrainingExample:
    """One KTO example: the prompt as the model saw it, the completion, and its label."""

    turn_id: int
    prompt: tuple[ChatMessage, ...]
    completion: str
    desirable: bool
    # Cut at the token budget: trained without an end token, never as a finished reply.
    cut: bool = False


@dataclass(frozen=True, slots=True)
class ExampleSnapshot:
    """What a run trained on, kept to explain it: the reward and its parts, never the text."""

    turn_id: int
    user_id: str
    label: Literal["desirable", "undesirable"]
    split: Literal["train", "heldout"]
    reward: float
    parts: JSONObject  # {"reaction": …, "reactions": …, "tool_uses": …, "turns_followed": …, …}


@dataclass(frozen=True, slots=True)
class NewAdapter:
    scope: str
    base_model: str
    path: str  # its folder, relative to the adapters directory: also the name replies ask for
    window_start: datetime
    window_end: datetime
    status: AdapterStatus = "candidate"
    run_id: int | None = None
    dataset: JSONObject = field(default_factory=dict)  # examples per label, people, weights
    metrics: JSONObject = field(default_factory=dict)  # training loss, KL, margins, examples/s
    gate: JSONObject = field(default_factory=dict)  # the evaluation gate's report


@dataclass(frozen=True, slots=True)
class AdapterRecord:
    version: int
    scope: str
    base_model: str
    path: str
    window_start: datetime
    window_end: datetime
    status: AdapterStatus
    created_at: datetime
    run_id: int | None = None
    promoted_at: datetime | None = None
    dataset: JSONObject = field(default_factory=dict)
    metrics: JSONObject = field(default_factory=dict)
    gate: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TrainingRun:
    id: int
    # Who asked: the job's id (Celery redelivers a job under the same id), or "cli", "admin:…".
    job_key: str
    status: RunStatus
    started_at: datetime
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None
    message: str = ""
    adapter_version: int | None = None
    # One JSON object per logged step: {"step", "loss", "kl", "margin", "examples_per_s", …}.
    steps: tuple[JSONObject, ...] = ()
    result: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class VersionRate:
    """How people reacted to the replies of one adapter version (None: the base model)."""

    adapter_version: int | None
    replies: int
    rated: int  # replies with at least one reaction
    positive: int  # replies whose mean reaction is above zero

    @property
    def positive_rate(self) -> float | None:
        return self.positive / self.rated if self.rated else None


# -- canaries and reward models ([canary]) ------------------------------------------------------

Arm = Literal["serving", "canary"]
# running: on trial. promoted: the test found it better, and it serves. harm: the test found it
# worse, and it was retired at once. expired: no decision within its days or replies ("undecided").
# stopped: an admin stopped it, or its files went missing.
CanaryStatus = Literal["running", "promoted", "harm", "expired", "stopped"]
RewardModelStatus = Literal["candidate", "serving", "retired", "failed"]


@dataclass(frozen=True, slots=True)
class Variant:
    """What produces a reply: the adapter (None: the base model) and the reward model that picks
    the best of n sampled candidates (None: none, n = 1). The base model and persona are recorded
    with each reply (`Generation`); they are not chosen by a trial."""

    adapter_version: int | None = None
    reward_model_version: int | None = None
    n: int = 1

    def describe(self) -> str:
        adapter = "the base model" if self.adapter_version is None else f"adapter v{self.adapter_version}"
        if self.reward_model_version is None:
            return adapter
        return f"{adapter} with reward model r{self.reward_model_version}, best of {self.n}"

    def as_json(self) -> JSONObject:
        return {"adapter": self.adapter_version, "reward_model": self.reward_model_version, "n": self.n}


@dataclass(frozen=True, slots=True)
class NewRewardModel:
    embedder: str
    model: JSONObject  # the weights (bot/core/learning/reward_model.py's RewardModel.as_json)
    report: JSONObject  # held-out AUC, its interval, examples per label
    status: RewardModelStatus = "candidate"
    run_id: int | None = None


@dataclass(frozen=True, slots=True)
class RewardModelRecord:
    version: int
    embedder: str
    status: RewardModelStatus
    model: JSONObject
    report: JSONObject
    created_at: datetime
    run_id: int | None = None
    promoted_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class NewCanary:
    base_model: str
    candidate: Variant
    serving: Variant
    share: float  # of replies the canary answers, chosen per reply
    seed: int  # with the reply's key, which arm answers it: recorded, so a decision can be replayed
    policy: JSONObject  # the sequential test's and the trial's settings, as they were at the start
    run_id: int | None = None


@dataclass(frozen=True, slots=True)
class Canary:
    id: int
    status: CanaryStatus
    base_model: str
    candidate: Variant
    serving: Variant
    share: float
    seed: int
    policy: JSONObject
    test: JSONObject  # the sequential test's state (bot/core/learning/sequential.py)
    history: tuple[JSONObject, ...]  # the bounds after each entry that changed them
    reason: str
    started_at: datetime
    decided_at: datetime | None = None
    run_id: int | None = None

    def variant(self, arm: Arm) -> Variant:
        return self.candidate if arm == "canary" else self.serving


@dataclass(frozen=True, slots=True)
class TrialReply:
    """A reply written during a canary, not yet entered into its test."""

    turn_id: int
    user_id: str
    created_at: datetime
    arm: Arm
    variant: Variant


@dataclass(frozen=True, slots=True)
class CanaryEntry:
    turn_id: int
    arm: Arm
    user_id: str
    day: str  # the UTC date the reply was written, for the per-person daily cap
    reward: float  # R when it entered, final for the test
    counted: bool  # False: logged only (the person's cap for the day, or not the arm's variant)
    note: str = ""


@dataclass(frozen=True, slots=True)
class VariantStats:
    """People's reactions to one variant's replies since a time: what `/admin` and
    `kindred adapters status --json` show. The reward per reply here is R without its
    turns-that-followed part (β · turns, which needs each chat's later turns): reactions, tool uses
    and proactive successes, weighed as R weighs them. The canary's test reads the whole R."""

    variant: Variant
    base_model: str
    arm: Arm
    replies: int
    rated: int  # with at least one reaction
    positive: int  # mean reaction above zero
    negative: int  # mean reaction below zero
    reward_sum: float
    reward_squares: float
