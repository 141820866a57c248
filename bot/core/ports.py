"""The core's boundaries. Each is a small Protocol with one real implementation per backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from bot.core.learning.models import (
    GLOBAL_SCOPE,
    AdapterRecord,
    AdapterStatus,
    ExampleSnapshot,
    NewAdapter,
    RatedReply,
    RunStatus,
    TrainingExample,
    TrainingRun,
    VersionRate,
)
from bot.core.miniapps.models import AppRecord, AppVersion, BuildRecord, BuildStatus, NewVersion, Rendered
from bot.core.models import (
    Admission,
    ChatMessage,
    DayStats,
    Feedback,
    JSONObject,
    Memory,
    MemoryHit,
    MessageLink,
    NewMemory,
    NewTurn,
    ReplyRecord,
    Revision,
    Signal,
    Stats,
    StreamEnd,
    Turn,
    Vector,
)
from bot.core.proactive.models import Activity, ProactiveSettings
from bot.core.proactive.records import Claim, Delivery, LedgerRow, NewReminder, Outcome, Reminder, TriggerRate


class TurnLog(Protocol):
    """The conversation record: turns in order, and feedback on them."""

    async def add_turn(self, turn: NewTurn) -> Turn:
        """Store a turn and its memory in one transaction. Idempotent on `idempotency_key`."""
        ...

    async def recent_turns(self, user_id: str, chat_id: str, limit: int) -> list[Turn]:
        """The latest `limit` turns of one chat, oldest first."""
        ...

    async def record_feedback(self, feedback: Feedback) -> None:
        """Upsert: a second reaction from the same user and source replaces the first."""
        ...

    async def remove_feedback(self, turn_id: int, user_id: str, source: str) -> None:
        """Undo a reaction. Removing one that does not exist is a no-op."""
        ...

    async def link_message(self, link: MessageLink) -> None:
        """Remember which turn a platform message shows. Linking the same message again is a no-op."""
        ...

    async def find_message(self, platform: str, chat_id: str, message_id: str) -> MessageLink | None:
        """The turn a platform message shows, or None for a message Kindred did not link."""
        ...

    async def set_user_active(self, user_id: str, active: bool) -> None:
        """Mark a person (un)reachable, e.g. after they blocked the bot. Their next message
        (a stored user turn) marks them active again."""
        ...

    async def is_user_active(self, user_id: str) -> bool:
        """False only for a known person marked inactive."""
        ...


class MemoryIndex(Protocol):
    """Recallable memories of each person, searched per user only."""

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        """Store memories in one transaction; ids come back in input order."""
        ...

    async def dense_search(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Nearest memories by cosine similarity (score = similarity). Full k when the user has k."""
        ...

    async def lexical_search(self, user_id: str, terms: Sequence[str], k: int) -> list[MemoryHit]:
        """Memories that share any of `terms`, best first. Terms are plain lowercase words."""
        ...

    async def rare_terms(self, user_id: str, terms: Sequence[str], *, share: float, floor: int) -> list[str]:
        """The terms found in at least one and at most max(floor, share × their memory count) of
        this user's memories, in input order: the words that can single a memory out."""
        ...

    async def list_memories(
        self, user_id: str, limit: int, offset: int = 0, *, without_kinds: Sequence[str] = ()
    ) -> list[Memory]:
        """One person's memories, oldest first, leaving out those of `without_kinds` (the offset
        counts only the memories listed)."""
        ...

    async def memory_count(self, user_id: str, *, without_kinds: Sequence[str] = ()) -> int:
        """How many memories this person has, leaving out those of `without_kinds` (0 for
        someone unknown)."""
        ...

    async def forget(self, user_id: str, memory_id: int) -> bool:
        """Delete one memory of this user. False when there was none: not an error.

        Every stored prompt (`Generation`) that used the memory or quotes its text is deleted with
        it, so no later training dataset holds it; the replies themselves stay in the history."""
        ...

    async def forget_all(self, user_id: str) -> int:
        """Delete every memory, turn, reaction, stored prompt and training snapshot of this user.
        Returns how many memories went."""
        ...


class MemoryCuration(Protocol):
    """What extraction, contradiction, checks and consolidation change about memories.

    Search (`MemoryIndex.dense_search`, `lexical_search`, `rare_terms`) sees only recallable
    memories (status active or past); listing, counting and export see every one.
    """

    async def get_memories(self, user_id: str, memory_ids: Sequence[int]) -> list[Memory]:
        """This user's memories among `memory_ids`, in id order; others' and missing ids are skipped."""
        ...

    async def revise_memory(self, user_id: str, memory_id: int, revision: Revision) -> bool:
        """Apply one revision (a new text is re-indexed for both searches). False: no such memory."""
        ...

    async def link_sources(self, memory_id: int, turn_ids: Sequence[int]) -> None:
        """Record the turns a memory came from. Linking a pair again is a no-op."""
        ...

    async def memory_sources(self, memory_id: int) -> list[int]:
        """The turns a memory came from, ascending: its own turn, and every linked one."""
        ...

    async def people(self, after: str | None, limit: int) -> list[str]:
        """User ids that have memories, ascending, after `after`: for jobs that visit everyone."""
        ...


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


class ProactiveSettingsLog(Protocol):
    """Each person's proactive choices, and what beat reads of them."""

    async def proactive_settings(self, user_id: str) -> ProactiveSettings:
        """The person's settings (the defaults when never set); `inactive` when they blocked the bot."""
        ...

    async def save_proactive_settings(self, user_id: str, settings: ProactiveSettings, at: datetime) -> None:
        """Replace the person's settings (`inactive` is not a setting: it is users.active)."""
        ...

    async def proactive_people(self, now: datetime, after: str, limit: int) -> list[str]:
        """People beat looks at, by id after `after`: those who turned proactive messages on, and
        those with a reminder due by `now`; never one marked inactive. Nobody else is loaded."""
        ...

    async def activity(self, user_id: str, since: datetime, limit: int) -> list[Activity]:
        """The person's own messages since `since`, oldest first, the latest `limit` at most."""
        ...


class ReminderBook(Protocol):
    async def add_reminder(self, reminder: NewReminder) -> Reminder: ...

    async def reminders(self, user_id: str, *, due_by: datetime | None = None) -> list[Reminder]:
        """The person's scheduled reminders, soonest first; with `due_by`, only those due by then."""
        ...

    async def cancel_reminder(self, user_id: str, reminder_id: int, at: datetime) -> bool:
        """Cancel one of the person's scheduled reminders. False: none such (or not theirs)."""
        ...


class SentLedger(Protocol):
    async def claim(self, claim: Claim) -> bool:
        """Record the decision to send, before sending. False: the key is already there (sent, or
        being sent), or its reminder is no longer scheduled: send nothing."""
        ...

    async def settle(self, key: str, delivery: Delivery) -> None:
        """How a claimed message ended."""
        ...

    async def sent_messages(self, user_id: str, since: datetime) -> list[LedgerRow]:
        """The person's ledger rows claimed since `since`, oldest first."""
        ...

    async def awaiting_outcome(self, user_id: str, chat_id: str, since: datetime) -> LedgerRow | None:
        """The latest message sent in this chat since `since` that has no outcome yet."""
        ...

    async def ledger_row(self, turn_id: int) -> LedgerRow | None:
        """The ledger row of the proactive message stored as `turn_id`, if it is one."""
        ...

    async def record_outcome(self, key: str, outcome: Outcome, at: datetime) -> bool:
        """Set the message's outcome once. False: it already had one (nothing changes)."""
        ...

    async def trigger_rates(self, since: datetime) -> list[TriggerRate]:
        """Per trigger, the messages sent since `since` and their outcomes, by trigger name."""
        ...


class ProactiveStore(ProactiveSettingsLog, ReminderBook, SentLedger, Protocol):
    """The proactive check-ins' part of the store ([proactive])."""


class Messenger(Protocol):
    """Writes to a person first, through one platform's API (PTB's `Bot`, discord.py's HTTP
    client), from any process: a worker has no gateway or update loop of its own."""

    platform: str

    async def private_chat(self, user_id: str) -> str:
        """The chat key of the person's private chat with the bot. Raises RecipientGone."""
        ...

    async def send(self, chat_id: str, text: str, *, never_again: bool = False) -> str:
        """Send plain text, with a "don't suggest this again" button when `never_again`; returns
        the platform message id. Raises RecipientGone when the person blocked the bot,
        DeliveryError when the platform refused it otherwise."""
        ...

    async def close(self) -> None:
        """Let go of the connection, if the first message opened one."""
        ...


class Buckets(Protocol):
    """Token buckets: in this process, or shared by every replica (per-person limits, flood control)."""

    async def take(self, key: str, rate_per_s: float, burst: float) -> float:
        """Take one token from `key`'s bucket, which holds up to `burst` tokens, fills at
        `rate_per_s` and is full when new. 0.0: taken; otherwise the seconds until one is there
        (nothing was taken)."""
        ...


class Intake(Protocol):
    """Updates that a platform pushes (a webhook), to one replica or to several behind one address:
    each update handled once, and those of one chat one at a time, in the order they came."""

    async def admit(self, update_key: str, chat_key: str | None) -> Admission:
        """The first time: `handle`, with the next ticket of its chat. Once finished: `duplicate`
        (remembered for a while). While a live replica holds it: `busy`. An update whose replica
        stopped renewing its hold (it died) for the lease is handed out again, with the same
        ticket. Raises SharedStateUnavailable when the shared state cannot be reached."""
        ...

    async def wait_turn(self, admission: Admission) -> None:
        """Return once every earlier ticket of the chat is finished, or held by no live replica
        (given up, and logged: a dead replica stalls its chats for at most the lease)."""
        ...

    async def finish(self, admission: Admission) -> None:
        """The update was handled: later copies are duplicates, and its chat's next ticket may go."""
        ...

    async def release(self, admission: Admission) -> None:
        """Give an admitted update back unhandled (this replica is stopping): its next copy is
        handled at once, by any replica, in the same place of its chat."""
        ...

    async def close(self) -> None: ...


class RecallIndex(MemoryIndex, RewardLog, Protocol):
    """What recall reads: the memories, and the reward they earned."""


class Store(TurnLog, MemoryIndex, MemoryCuration, RewardLog, LearningLog, AdapterRegistry, Protocol):
    backend: str

    @property
    def apps(self) -> AppStore:
        """The mini-apps, on the same connection."""
        ...

    @property
    def proactive(self) -> ProactiveStore:
        """The proactive check-ins' settings, reminders and sent ledger, on the same connection."""
        ...

    async def stats(self) -> Stats: ...

    async def daily_activity(self, days: int) -> list[DayStats]:
        """The last `days` UTC days, today included, oldest first; a quiet day counts zeros."""
        ...

    async def maintain(self) -> list[str]:
        """Routine upkeep (planner statistics, journal checkpoint). Returns what it did."""
        ...

    async def close(self) -> None: ...


class Embedder(Protocol):
    model_name: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Unit-length vectors, one per text, computed off the event loop."""
        ...


class Inference(Protocol):
    # Tokens the model can attend to: prompt and reply together.
    context_window: int

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
    ) -> AsyncIterator[str]:
        """Yield the reply in text chunks. Raises InferenceTimeout past the configured limit.

        When the stream finishes normally, an engine that knows sets `ending.reason`: "length" when
        the token budget stopped the reply, "stop" when the model ended it. One that cannot say
        leaves it None; so does a stream that failed or was closed early.
        """
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in this model's prompt, for the context budget."""
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

    def agreement(self, adapter: Path | None) -> float:
        """On the shipped sycophancy probes: the share where agreeing is more likely than not."""
        ...


class AppCatalog(Protocol):
    """Mini-apps and their versions. Every version is a whole app; the served one is `version`."""

    async def create_app(
        self, owner: str, chat_id: str, token: str, version: NewVersion, at: datetime
    ) -> AppRecord:
        """A new app whose version 1 is `version`."""
        ...

    async def add_version(self, app_id: int, version: NewVersion, at: datetime) -> AppRecord:
        """Version latest + 1, served from now on."""
        ...

    async def serve_version(self, owner: str, app_id: int, version: int, at: datetime) -> AppRecord | None:
        """Serve an existing version again (restore). None: no such app of theirs or version."""
        ...

    async def app_by_token(self, token: str) -> AppRecord | None:
        """The app behind a link, revoked ones included (the caller answers 404 for those)."""
        ...

    async def get_app(self, owner: str, app_id: int) -> AppRecord | None: ...

    async def get_version(self, app_id: int, version: int) -> AppVersion | None: ...

    async def list_apps(self, owner: str, limit: int) -> list[AppRecord]:
        """The person's apps, the latest changed first, revoked ones included."""
        ...

    async def find_cached(self, owner: str, request_key: str) -> AppRecord | None:
        """The person's live app whose served version was built from this request key."""
        ...

    async def revoke(self, owner: str, app_id: int, at: datetime) -> bool:
        """Revoke the link for good. False: no such app of theirs, or already revoked."""
        ...

    async def delivered(self, app_id: int, turn_id: int) -> None:
        """The assistant turn that has just delivered the app's link."""
        ...


class AppBuilds(Protocol):
    """Builds in flight, per person: the concurrency limit and the progress a chat shows."""

    async def start_build(
        self, key: str, owner: str, at: datetime, *, limit: int, stale_after: timedelta
    ) -> BuildRecord | None:
        """Start (or, for a redelivered job, resume) the build `key`. None: the person already has
        `limit` other builds running; builds silent past `stale_after` count as failed."""
        ...

    async def build_step(self, key: str, step: str, at: datetime) -> None: ...

    async def finish_build(
        self, key: str, status: BuildStatus, message: str, at: datetime, *, app_id: int | None = None
    ) -> None: ...

    async def get_build(self, key: str) -> BuildRecord | None: ...


class AppState(Protocol):
    """A small key-value store per app: what the app keeps across reloads, under a size quota."""

    async def read_state(self, app_id: int) -> dict[str, str]: ...

    async def write_state(self, app_id: int, key: str, value: str, *, quota_bytes: int, at: datetime) -> bool:
        """Set one key. False (and nothing written) when the app's keys and values would pass
        `quota_bytes` in UTF-8."""
        ...


class AppStore(AppCatalog, AppBuilds, AppState, Protocol):
    """Everything the mini-apps keep."""


class AppRenderer(Protocol):
    """Turns a kind's spec into one self-contained HTML file, and judges such a file."""

    def render(self, kind: str, spec: JSONObject) -> Rendered: ...

    def problems(self, rendered: Rendered) -> list[str]:
        """Why the file must not be served (empty: it may be)."""
        ...

    def free_form(
        self, spec: JSONObject, page: str, untrusted: Sequence[str]
    ) -> tuple[Rendered | None, list[str]]:
        """A capable model's whole page made into an app (the spec and runtime added), and why it
        must not be served (empty: it may be); `untrusted` is text from the person's request."""
        ...
