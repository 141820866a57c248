"""The reply as a stored turn: with the memories its prompt used and each one's share, and how it
was made (the prompt as the model saw it, the adapter, whether it was cut)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.events import UserMessage
from bot.core.memory import REPLY, Recalled, shares
from bot.core.models import Generation, NewTurn, Turn, Vector

REPLY_SUFFIX = ":reply"


def reply_key(key: str) -> str:
    """The idempotency key of the reply to the message whose key is `key`."""
    return key + REPLY_SUFFIX


def reply_turn_memories(recalled: Sequence[Recalled]) -> tuple[int, ...]:
    return tuple(item.memory.id for item in recalled)


def reply_turn_of(
    message: UserMessage,
    key: str,
    reply: str,
    recalled: Sequence[Recalled],
    stored: Turn | None,
    generation: Generation,
    embedded: tuple[Vector, str],
    at: datetime,
) -> NewTurn:
    """`embedded`: the reply's vector and the embedder's name."""
    return NewTurn(
        user_id=message.user_id,
        chat_id=message.chat_id,
        role="assistant",
        text=reply or "…",
        embedding=embedded[0],
        embedding_model=embedded[1],
        created_at=at,
        used_memory_ids=reply_turn_memories(recalled),
        memory_shares=shares([item.score for item in recalled]),
        reply_to=stored.id if stored else None,
        idempotency_key=reply_key(key),
        meta={"chat_id": message.chat_id},
        # Kept for the history and the learning dataset, never searched: the model's words are
        # not evidence about the person (core/memory/kinds.py).
        memory_kind=REPLY,
        generation=generation,
    )
