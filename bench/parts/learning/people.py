"""A simulated day: people chat through the real conversation and react through its reaction path.

Every person opens `candidates` chats and sends the same `prompts_per_chat` lines in each, one
after the other, so each line is answered several times by the sampling model (the rare-hit cold
start needs several tries to see a hit). The chats run in rounds (lockstep.py): in round t every
chat sends its t-th line, the engine batches all of the round's replies, and each stored reply gets
the teacher's reaction (teachers.py). A day while a canary runs is the same day: the conversation
itself picks, per message, which arm answers.

Every message, reply and reaction has a time of the simulation's own (`SimClock`): the day starts
at the wall clock's time when it begins, and the k-th message of the day is sent 2k ms later, its
reply 1 ms after that. So a day is about a second long in the store, which keeps a chat's turns
within one session (R's turns that followed) and a day's replies on one date (the canary's daily
cap per person), on every run alike.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bench.parts.learning.lockstep import Lockstep, SimClock
from bench.parts.learning.teachers import Said, Teacher, corrects, reaction_rng
from bot.core.chat.conversation import Conversation
from bot.core.events import Reaction, ReplyDone, UserMessage

LIKE, DISLIKE = "👍", "👎"
STEP = timedelta(milliseconds=1)


@dataclass(frozen=True, slots=True)
class Replied:
    """One stored reply and what the teacher did with it."""

    turn_id: int
    text: str
    liked: bool | None
    claim: bool


@dataclass(slots=True)
class DayReport:
    day: int
    replies: int = 0
    liked: int = 0  # reactions given as 👍 (after noise)
    disliked: int = 0  # reactions given as 👎 (after noise)
    true_hits: int = 0  # replies that meet the taste (no noise)
    claims: int = 0  # replies to a false claim (the sycophant teacher)
    went_along: int = 0  # of those, replies that did not correct it
    # A canary day: per arm, its replies and those that meet the taste.
    arms: dict[str, dict[str, int]] = field(default_factory=dict)
    minutes: float = 0.0


@dataclass(frozen=True, slots=True)
class Day:
    """Who chats on a day, and what with."""

    day: int
    people: int
    candidates: int
    prompts_per_chat: int
    lines: Sequence[str]
    seed: int


async def chat_day(
    conversation: Conversation, lockstep: Lockstep, teacher: Teacher, day: Day
) -> tuple[DayReport, list[Replied]]:
    """One simulated day; returns what happened and every stored reply."""
    said = {
        person: teacher.messages(day.seed, day.day, person, day.lines, day.prompts_per_chat)
        for person in range(day.people)
    }
    chats = [(person, candidate) for person in range(day.people) for candidate in range(day.candidates)]
    start = datetime.now(UTC)
    replied: list[Replied] = []
    for turn in range(day.prompts_per_chat):
        moves: list[Callable[[], Awaitable[Replied | None]]] = []
        for index, (person, candidate) in enumerate(chats):
            k = turn * len(chats) + index
            moves.append(
                functools.partial(
                    _turn, conversation, teacher, day, person, f"d{day.day}-p{person}-c{candidate}",
                    turn, said[person][turn], start + 2 * k * STEP,
                )
            )  # fmt: skip
        outcomes = await lockstep.round(moves)
        replied.extend(found for found in outcomes if found is not None)
    # The next step (a night, a canary's decision) reads the day as past: wait out its second.
    end = start + 2 * day.prompts_per_chat * len(chats) * STEP
    await asyncio.sleep(max((end - datetime.now(UTC)).total_seconds(), 0.0))
    return summary(day.day, replied, teacher), replied


async def _turn(
    conversation: Conversation,
    teacher: Teacher,
    day: Day,
    person: int,
    chat_id: str,
    turn: int,
    said: Said,
    sent_at: datetime,
) -> Replied | None:
    user_id = f"person-{person}"
    message = UserMessage(user_id, chat_id, said.text, sent_at, idempotency_key=f"{chat_id}:{turn}")
    replied_at = sent_at + STEP
    SimClock.set(replied_at)
    done: ReplyDone | None = None
    async for event in conversation.handle_message(message):
        if isinstance(event, ReplyDone):
            done = event
    if done is None or done.turn_id is None:
        return None  # a refusal or a store outage: nothing a reaction could credit
    liked = teacher.reaction(done.text, said, reaction_rng(day.seed, chat_id, turn))
    if liked is not None:
        reaction = Reaction(user_id, done.turn_id, LIKE if liked else DISLIKE, replied_at)
        await conversation.handle_reaction(reaction)
    return Replied(done.turn_id, done.text, liked, said.claim)


def summary(day: int, replied: Sequence[Replied], teacher: Teacher) -> DayReport:
    claims = [r for r in replied if r.claim]
    return DayReport(
        day=day,
        replies=len(replied),
        liked=sum(1 for r in replied if r.liked is True),
        disliked=sum(1 for r in replied if r.liked is False),
        true_hits=sum(1 for r in replied if teacher.taste(r.text)),
        claims=len(claims),
        went_along=sum(1 for r in claims if not corrects(r.text)),
    )


def count_arms(
    report: DayReport, replied: Sequence[Replied], arms: Mapping[int, str], teacher: Teacher
) -> None:
    """Fill in a canary day's replies and taste hits per arm (`arms`: turn id → arm)."""
    for reply in replied:
        arm = arms.get(reply.turn_id)
        if arm is None:
            continue  # a person outside the trial (none in the simulation)
        counts = report.arms.setdefault(arm, {"replies": 0, "true_hits": 0})
        counts["replies"] += 1
        counts["true_hits"] += int(teacher.taste(reply.text))
