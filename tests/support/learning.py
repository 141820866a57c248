"""Rated replies for the tests of nightly training: stored as the conversation stores them (the
prompt kept with each reply), rated by a reaction, spread over several people."""

from __future__ import annotations

from datetime import datetime

from bot.core.models import ChatMessage, Feedback, Generation, NewTurn
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()
PERSONA = ChatMessage("system", "You are Kindred, a test companion.")


async def rated_replies(
    store: Store,
    per_label: int,
    at: datetime,
    *,
    people: int = 3,
    persona: str | None = None,
    model: str = "",
) -> list[int]:
    """`per_label` replies liked (👍, +1) and as many disliked (👎, −1); a liked reply asks a
    question back, a disliked one does not. Each exchange is a chat of its own, so that no reply
    earns β from turns that followed it: R is the reaction alone. Each variant record names
    `persona` and the base `model`. Returns the reply turn ids."""
    ids = []
    for n in range(2 * per_label):
        liked = n % 2 == 0
        user = f"person{n % people}"
        said = f"I went for a walk by the river today, number {n}."
        text = f"That sounds lovely, walk {n}. Where did you go?" if liked else f"Ok. Walk {n} noted."
        prompt, chat = (PERSONA, ChatMessage("user", said)), f"c{persona or ''}{n}"
        await store.turns.add_turn(NewTurn(user, chat, "user", said, EMB.vector(said), EMB.model_name, at))
        reply = await store.turns.add_turn(
            NewTurn(
                user, chat, "assistant", text, EMB.vector(text), EMB.model_name, at, memory_kind="reply",
                generation=Generation(prompt, None, False, base_model=model, persona=persona),
            )
        )  # fmt: skip
        emoji, value = ("👍", 1.0) if liked else ("👎", -1.0)
        await store.turns.record_feedback(Feedback(reply.id, user, emoji, value, at))
        ids.append(reply.id)
    return ids
