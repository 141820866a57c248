"""The learning simulation's people: a day of chats and reactions, and the held-out measurement.

A day: every person opens `candidates` chats and sends the same `prompts_per_chat` lines in each,
one after the other, so each line is answered several times by the sampling model (the rare-hit cold
start needs several tries to see a hit). Chats run side by side, so the local engine batches them.
Every stored reply gets 👍 or 👎 from the teacher through the real reaction path.

The measurement: held-out prompts, answered with the same prompt shape a newcomer's first message
gets (the persona and the line), through `Inference.stream` with the adapter under test, never stored
and never reacted to.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.chat.conversation import Conversation
from bot.core.chat.ports import Inference
from bot.core.chat.prompt import build_messages
from bot.core.events import Reaction, ReplyDone, UserMessage
from bot.core.models import ChatMessage

LIKE, DISLIKE = "👍", "👎"


@dataclass(frozen=True, slots=True)
class Teacher:
    """Reacts to a reply, or lets it pass: 👍 to every reply that meets the taste, 👎 to a share
    (`react_to_misses`) of the others, as people react to what pleases them and only now and then
    to what does not. Each reaction given is then flipped with probability `noise`. The random
    teacher reacts to every reply, 👍 or 👎 by a coin."""

    taste: Callable[[str], bool]
    random_reactions: bool
    noise: float
    react_to_misses: float
    rng: random.Random

    def reaction(self, reply: str) -> bool | None:
        """True: 👍, False: 👎, None: no reaction."""
        if self.random_reactions:
            liked = self.rng.random() < 0.5
        else:
            liked = self.taste(reply)
            if not liked and self.rng.random() >= self.react_to_misses:
                return None
        return (not liked) if self.rng.random() < self.noise else liked


@dataclass(frozen=True, slots=True)
class DayReport:
    replies: int
    liked: int  # reactions given as 👍 (after noise)
    disliked: int  # reactions given as 👎 (after noise)
    true_hits: int  # replies that meet the taste (no noise)


async def chat_day(
    conversation: Conversation,
    people: int,
    candidates: int,
    lines: Sequence[str],
    prompts_per_chat: int,
    teacher: Teacher,
    day: int,
) -> DayReport:
    """One simulated day; returns how many replies there were and how the teacher reacted."""
    rng = random.Random(day)
    chats = []
    for person in range(people):
        chosen = rng.sample(list(lines), prompts_per_chat)
        for candidate in range(candidates):
            chats.append((f"person-{person}", f"d{day}-p{person}-c{candidate}", chosen))
    outcomes = await asyncio.gather(*(_chat(conversation, u, c, texts, teacher) for u, c, texts in chats))
    replies = [reply for chat in outcomes for reply in chat]
    return DayReport(
        replies=len(replies),
        liked=sum(1 for _, liked in replies if liked is True),
        disliked=sum(1 for _, liked in replies if liked is False),
        true_hits=sum(1 for text, _ in replies if teacher.taste(text)),
    )


async def _chat(
    conversation: Conversation, user_id: str, chat_id: str, texts: Sequence[str], teacher: Teacher
) -> list[tuple[str, bool | None]]:
    reacted: list[tuple[str, bool | None]] = []
    for index, text in enumerate(texts):
        message = UserMessage(user_id, chat_id, text, datetime.now(UTC), idempotency_key=f"{chat_id}:{index}")
        done: ReplyDone | None = None
        async for event in conversation.handle_message(message):
            if isinstance(event, ReplyDone):
                done = event
        if done is None or done.turn_id is None:
            continue  # a refusal or a store outage: nothing a reaction could credit
        liked = teacher.reaction(done.text)
        if liked is not None:
            reaction = Reaction(user_id, done.turn_id, LIKE if liked else DISLIKE, datetime.now(UTC))
            await conversation.handle_reaction(reaction)
        reacted.append((done.text, liked))
    return reacted


async def held_out_replies(
    inference: Inference,
    persona: str,
    lines: Sequence[str],
    samples: int,
    max_new_tokens: int,
    adapter: str | None,
) -> list[str]:
    """Each held-out line answered `samples` times by `adapter` (None: the base model)."""

    async def answer(text: str) -> str:
        messages: list[ChatMessage] = build_messages(
            persona,
            [],
            [],
            text,
            budget_tokens=inference.context_window - max_new_tokens,
            count_tokens=inference.count_tokens,
        )
        parts = [
            chunk async for chunk in inference.stream(messages, max_tokens=max_new_tokens, adapter=adapter)
        ]
        return "".join(parts).strip()

    return list(await asyncio.gather(*(answer(text) for text in lines for _ in range(samples))))
