"""The person's own words as a stored turn: what the conversation stores before it answers, and
what is kept without an answer (a long voice note heard by a job, `kindred memory add-file`).
One builder, so that a turn kept either way is the same turn, and a second delivery of it (the
same idempotency key) stores nothing more."""

from __future__ import annotations

import uuid

from bot.core.chat.ports import TurnLog
from bot.core.events import UserMessage
from bot.core.memory import classify
from bot.core.memory.ports import Embedder
from bot.core.models import NewTurn, Turn, Vector
from bot.core.text import EMBED_CHARS, clean_message


def message_key(message: UserMessage) -> str:
    """The message's idempotency key; one of its own when the platform gave none."""
    return message.idempotency_key or f"{message.chat_id}:{uuid.uuid4()}"


def person_turn(message: UserMessage, text: str, key: str, vector: Vector, embedding_model: str) -> NewTurn:
    """`message` as the person's turn, `text` being its cleaned words."""
    return NewTurn(
        user_id=message.user_id,
        chat_id=message.chat_id,
        role="user",
        text=text,
        embedding=vector,
        embedding_model=embedding_model,
        created_at=message.sent_at,
        idempotency_key=key,
        # Which chat a memory came from: a shared chat may recall only its own. A voice note's
        # words are the person's own, kept with what was heard (source, duration, language); a
        # photo's caption says it came with one (the description is the model's, kept apart).
        meta={"chat_id": message.chat_id, **_media_meta(message)},
        memory_kind=classify(text),
    )


async def keep_words(turns: TurnLog, embedder: Embedder, message: UserMessage, *, max_chars: int) -> Turn:
    """Store `message` as the person's turn without answering it; searchable when this returns.
    Raises InvalidInput for words that cannot be stored (nothing readable, too long)."""
    text = clean_message(message.text, max_chars)
    vector = (await embedder.embed([text[:EMBED_CHARS]]))[0]
    return await turns.add_turn(person_turn(message, text, message_key(message), vector, embedder.model_name))


def _media_meta(message: UserMessage) -> dict[str, object]:
    if message.heard is not None:
        return message.heard.meta()
    return message.seen.meta() if message.seen is not None else {}
