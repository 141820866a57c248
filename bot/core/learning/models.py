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
