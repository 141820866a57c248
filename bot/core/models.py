"""Value types that cross the core's ports. Defined once; every implementation returns these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Role = Literal["system", "user", "assistant"]
# Implicit reward signals a reply can earn besides reactions (their sources come with later issues).
Signal = Literal["tool_use", "proactive_success"]
JSONObject = Mapping[str, Any]

# The bot's own reply, stored with its turn (core/chat/conversation.py) or imported as the assistant's.
REPLY = "reply"
# A message that only asks: every sentence of it is a question.
QUESTION = "question"
# A passage of a file the person shared (core/media/documents.py): searched, but weighed below
# what the person said themselves (core/memory/scoring.py), and shown with its file and page.
DOCUMENT = "document"
# What the vision model saw in a photo the person sent (core/chat/images.py): the model's words,
# stored with speaker "assistant", so it weighs least (core/memory/scoring.py), below the person's
# own words and their files; shown like a file's passage, in their turn, never the system prompt.
IMAGE = "image"
# Memory kinds kept, listed and exported, never searched: they say nothing about the person
# (core/memory/kinds.py says why).
NOT_EVIDENCE: frozenset[str] = frozenset({REPLY, QUESTION})


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


# How a reply's stream ended: "stop", the model ended it; "length", the token budget stopped it.
EndReason = Literal["stop", "length"]


@dataclass(slots=True)
class StreamEnd:
    """How one `Inference.stream` ended, filled in by the engine when the stream finishes normally.

    `reason` "length" means the token budget (max_tokens, or the context left) stopped the reply
    before the model ended it; "stop" means the model ended it. None: not finished (yet), or the
    engine cannot say.
    """

    reason: EndReason | None = None
    # The tokens the backend read (the prompt) and wrote, as it reports them (an OpenAI-compatible
    # `usage`); None where it does not, and the core counts them with `Inference.count_tokens`.
    tokens_in: int | None = None
    tokens_out: int | None = None


@dataclass(frozen=True, slots=True)
class Sampled:
    """One candidate reply of `Inference.sample`, written whole."""

    text: str
    # The token budget stopped it before the model ended it (finish_reason "length").
    cut: bool
    # The tokens read and written for it, as the backend reports them; None: the core counts them.
    # A backend that reports one usage for several candidates (one request with `n`) puts it all
    # on the first of them and 0 on the others, so that the candidates' sum is what it reported.
    tokens_in: int | None = None
    tokens_out: int | None = None


@dataclass(frozen=True, slots=True)
class Generation:
    """How a stored reply was made, kept with it so that a night trains on what the model saw.

    `prompt` is the messages exactly as they went to `Inference.stream`: persona, memory block,
    recent turns and the message. They are never rebuilt later from memories that may have changed.
    """

    prompt: tuple[ChatMessage, ...]
    # The registry version of the adapter that wrote it; None: the base model.
    adapter_version: int | None
    # The reply stopped at max_new_tokens instead of ending: never trained as if it had ended.
    cut: bool
    # The rest of its variant ([canary]): the base model, the reward model that chose it among `n`
    # sampled candidates (None: none, and n is 1), the persona where one is named.
    base_model: str = ""
    reward_model_version: int | None = None
    n: int = 1
    persona: str | None = None
    # The arm of the canary it was part of; canary_id None: no canary ran, or the person was outside it.
    arm: Literal["serving", "canary"] = "serving"
    canary_id: int | None = None


@dataclass(frozen=True, slots=True)
class NewTurn:
    """A turn to store. Storing it also stores it as a recallable memory with `embedding`."""

    user_id: str
    chat_id: str
    role: Literal["user", "assistant"]
    text: str
    embedding: Vector
    embedding_model: str
    created_at: datetime
    used_memory_ids: tuple[int, ...] = ()
    reply_to: int | None = None
    # A retry that repeats the same key returns the first stored turn instead of a second one.
    idempotency_key: str | None = None
    meta: JSONObject = field(default_factory=dict)
    # The kind its memory is stored as (core/memory/kinds.py): "turn", or "preference", "fact", "event",
    # "question"; a reply's is "reply" (never searched).
    memory_kind: str = "turn"
    # Each used memory's share of the prompt's retrieval score, in `used_memory_ids` order; a
    # reaction to this reply credits the memories in these proportions. Empty: no credit.
    memory_shares: tuple[float, ...] = ()
    # A reply's prompt, adapter and cut flag ([learning]); None for a person's turn or an import.
    generation: Generation | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    id: int
    memory_id: int
    user_id: str
    chat_id: str
    role: Literal["user", "assistant"]
    text: str
    created_at: datetime
    used_memory_ids: tuple[int, ...] = ()
    reply_to: int | None = None


@dataclass(frozen=True, slots=True)
class NewMemory:
    user_id: str
    text: str
    speaker: str | None
    created_at: datetime
    embedding: Vector
    embedding_model: str
    kind: str = "turn"
    meta: JSONObject = field(default_factory=dict)
    # Searched beside `text` but never shown: the speaker's name, a short turn's previous turn.
    context: str = ""


@dataclass(frozen=True, slots=True)
class Memory:
    id: int
    user_id: str
    kind: str
    text: str
    speaker: str | None
    created_at: datetime
    embedding_model: str
    meta: JSONObject = field(default_factory=dict)
    source_turn_id: int | None = None
    # Curation (schema 0004). `status`: see MemoryStatus. `superseded_by`: the memory that replaced
    # this one (a contradiction, a correction, or the older twin a near-duplicate folded into).
    status: str = "active"
    superseded_by: int | None = None
    verification: float = 0.0  # v(m), −1…1: confirmed by the person or an external check
    weight: float = 1.0  # consolidation lowers it for raw turns a summary covers
    pinned: bool = False  # the person asked to remember it: consolidation never touches it
    updated_at: datetime | None = None

    @property
    def recallable(self) -> bool:
        """What search may return: a recallable status, and evidence about the person (core/kinds)."""
        return self.status in RECALLABLE and self.kind not in NOT_EVIDENCE


# active: recalled as usual. past: an event whose date has gone by; still recalled, shown as past.
# superseded: contradicted or corrected. merged: a near-duplicate folded into `superseded_by`.
# archived: a raw turn a summary covers, dropped from recall when the person is over budget.
MemoryStatus = Literal["active", "past", "superseded", "merged", "archived"]
RECALLABLE: frozenset[str] = frozenset({"active", "past"})


@dataclass(frozen=True, slots=True)
class Revision:
    """A change to one memory; None leaves a field as it is. `embedding` goes with a new `text`."""

    text: str | None = None
    embedding: Vector | None = None
    kind: str | None = None
    status: str | None = None
    superseded_by: int | None = None
    verification: float | None = None
    weight: float | None = None
    pinned: bool | None = None
    meta: JSONObject | None = None  # replaces the whole object
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """One search result. `score` is higher-is-better within one search only."""

    memory: Memory
    score: float


@dataclass(frozen=True, slots=True)
class Feedback:
    """A person's reaction to a reply. One per (turn, user, source): a new one replaces the old."""

    turn_id: int
    user_id: str
    emoji: str
    value: float
    created_at: datetime
    source: str = "reaction"


@dataclass(frozen=True, slots=True)
class MessageLink:
    """A platform message that shows (part of) a stored reply. Reactions find their turn by it."""

    platform: str
    chat_id: str
    message_id: str
    turn_id: int
    # Whose conversation the reply belongs to; not necessarily who reacts to it.
    user_id: str


DoubtStatus = Literal["unknown", "told", "delivered", "resent"]


@dataclass(frozen=True, slots=True)
class DeliveryDoubt:
    """A stored reply whose send may have reached the person or not (the request was written, then
    a 5xx or no answer came): `unknown`, `told` (the person heard it may not have arrived),
    `delivered` (they reacted or replied to it) or `resent` (they asked for it again)."""

    platform: str
    chat_id: str
    turn_id: int
    user_id: str
    text: str = ""  # the reply, as stored
    status: DoubtStatus = "unknown"


@dataclass(frozen=True, slots=True)
class Stats:
    backend: str
    users: int
    turns: int
    memories: int
    feedback_events: int


@dataclass(frozen=True, slots=True)
class DayStats:
    """One UTC day of activity, for the admin page. `reward` is the mean reaction value, if any."""

    day: date
    users: int  # people who wrote at least one turn that day
    turns: int
    memories: int
    reactions: int
    reward: float | None


@dataclass(frozen=True, slots=True)
class UsedMemory:
    """A memory a reply's prompt used, and its share of that prompt's retrieval score."""

    memory_id: int
    share: float
    text: str


@dataclass(frozen=True, slots=True)
class Reaction:
    """One current feedback row on a reply: who gave it, and what it is worth."""

    user_id: str
    value: float


@dataclass(frozen=True, slots=True)
class ReplyRecord:
    """What the store holds about one reply, as it is now: the raw parts of its reward.

    Nothing here is a running total. Reactions are the current feedback rows, so an undone or
    changed reaction is simply a different record; the core weighs the parts (core/learning/reward.py).
    """

    turn_id: int
    user_id: str
    chat_id: str
    created_at: datetime
    reactions: tuple[Reaction, ...]  # each current feedback row on this reply
    tool_uses: int
    proactive_successes: int
    # When each of the person's later turns in the same chat was written, oldest first (a few).
    later_turns: tuple[datetime, ...]
    memories: tuple[UsedMemory, ...]


@dataclass(frozen=True, slots=True)
class Admission:
    """What a replica may do with an update it was just sent (`Intake.admit`): handle it, drop
    it as a copy of one already handled, or refuse it while another live replica holds it."""

    verdict: Literal["handle", "duplicate", "busy"]
    update_key: str
    chat_key: str | None = None
    # Its place in its chat (1, 2, …): updates of one chat are handled in ticket order. 0 for an
    # update of no chat, or one not to handle.
    ticket: int = 0
