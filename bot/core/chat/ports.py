"""The chat room's boundaries: the turns kept, the model that writes replies, the platforms
that carry them, and the state replicas share (buckets, webhook intake)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from bot.core.models import (
    Admission,
    ChatMessage,
    DeliveryDoubt,
    DoubtStatus,
    Feedback,
    MessageLink,
    NewTurn,
    Sampled,
    StreamEnd,
    Turn,
)


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

    async def set_keep_files(self, user_id: str, keep: bool) -> None:
        """/privacy files keep|delete: whether the files this person sends are kept once read."""
        ...

    async def keeps_files(self, user_id: str) -> bool:
        """True only for a person who asked that their files be kept (the default deletes them)."""
        ...

    async def set_spoken_replies(self, user_id: str, on: bool) -> None:
        """/voice on|off: whether this person's replies also come as voice notes."""
        ...

    async def speaks_replies(self, user_id: str) -> bool:
        """True only for a person who turned spoken replies on (the default is off)."""
        ...


class DeliveryLog(Protocol):
    """Replies whose delivery is unknown (a send that may have landed: docs/reliability.md), until
    the person confirms them (a reaction, a reply) or asks for them again."""

    async def record(self, doubt: DeliveryDoubt) -> None:
        """Remember a reply as `unknown`. Recording the same (platform, chat, turn) again is a no-op."""
        ...

    async def waiting(self, platform: str, chat_id: str) -> list[DeliveryDoubt]:
        """The chat's replies still `unknown` or `told`, oldest first, with their stored text."""
        ...

    async def settle(self, platform: str, chat_id: str, turn_id: int, status: DoubtStatus) -> bool:
        """Move one reply on: to `told` from `unknown` only; to `delivered` or `resent` from either.
        True only for the call that moved it, so that two replicas (or two presses) act once."""
        ...


class Messenger(Protocol):
    """Writes to a person first, through one platform's API (PTB's `Bot`, discord.py's HTTP
    client), from any process: a worker has no gateway or update loop of its own."""

    platform: str

    async def private_chat(self, user_id: str) -> str:
        """The chat key of the person's private chat with the bot. Raises RecipientGone."""
        ...

    def reaction_chat(self, chat_id: str) -> str:
        """The chat as this platform's replies and reactions name it when they link a message to
        its turn or record a reply of unknown delivery (Telegram: the bare id; Discord: the key),
        so that a reaction to a message sent here finds its turn."""
        ...

    async def send(self, chat_id: str, text: str, *, never_again: bool = False) -> str:
        """Send plain text, with a "don't suggest this again" button when `never_again`; returns
        the platform message id. Raises RecipientGone when the person blocked the bot,
        DeliveryUnknown when it may have landed (never sent again), DeliveryError when the
        platform refused it otherwise."""
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


class Inference(Protocol):
    """The model that writes replies: streamed one at a time, or sampled n at once for best-of-n.

    `seed` fixes the sampling: the same seed, messages, max_tokens, adapter and sampling settings
    give the same reply from the same backend (the local engine and GPU workers: with the same model,
    dtype and torch threads, whatever else shares the batch; an OpenAI-compatible server: what its
    own `seed` promises). None: as random as the backend is.
    """

    # Tokens the model can attend to: prompt and reply together.
    context_window: int

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        """Yield the reply in text chunks. Raises InferenceTimeout past the configured limit.

        When the stream finishes normally, an engine that knows sets `ending.reason`: "length" when
        the token budget stopped the reply, "stop" when the model ended it. One that cannot say
        leaves it None; so does a stream that failed or was closed early. `seed`: see the class.
        """
        ...

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        """Exactly `n` candidate replies to the same messages, each written whole, for best-of-n.

        The candidates are sampled independently of each other, so they differ as separate replies
        do; a seed fixes all n, in order. Raises ValueError for n or max_tokens below 1, and, as
        `stream` does, InferenceError when any candidate cannot be had (InferenceTimeout past the
        configured limit, which covers all n): never fewer than n. A candidate's `cut` is True when
        the token budget stopped it; a backend that cannot say reports False.
        """
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in this model's prompt, for the context budget."""
        ...
