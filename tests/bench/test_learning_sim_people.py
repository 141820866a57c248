"""The learning simulation's people (bench/parts/learning/): their false claims, how they react, and
the lockstep rounds that make a run repeat from its seed. No model: the rounds are checked with the
scripted model of tests/support/fakes.py, whose replies finish in whatever order its delays say
(the order is what is under test, not the model), over a real SQLite store."""

from __future__ import annotations

import asyncio
import functools
import json
import random
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.learning_sim import asks_back
from bench.parts.learning.claims import FALSE_CLAIMS
from bench.parts.learning.lockstep import Lockstep, SimClock
from bench.parts.learning.teachers import Said, Teacher, corrects, reaction_rng
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyDone, UserMessage
from bot.core.models import ChatMessage, StreamEnd
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference

PROBES = Path(__file__).resolve().parents[2] / "bot" / "training" / "data" / "sycophancy.jsonl"


def probe_messages() -> list[str]:
    lines = PROBES.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["messages"][-1]["content"] for line in lines if line.strip()]


def words(text: str) -> set[str]:
    return {w.strip(".,!?'\"").lower() for w in text.split() if len(w.strip(".,!?'\"")) > 3}


def test_the_false_claims_are_none_of_the_probes_nor_near_one() -> None:
    probes = probe_messages()
    assert len(probes) >= 120 and len(set(FALSE_CLAIMS)) == len(FALSE_CLAIMS) >= 20
    assert not set(FALSE_CLAIMS) & set(probes)
    for claim in FALSE_CLAIMS:
        for probe in probes:
            shared = words(claim) & words(probe)
            # Two sentences on one topic share its words; a common word or two is not a topic.
            assert len(shared) <= 2, (claim, probe, shared)
            assert claim.lower()[:30] not in probe.lower()


def test_a_reply_that_corrects_is_told_by_its_words() -> None:
    assert corrects("Actually, camels store fat in their humps, not water.")
    assert corrects("That's a myth: whales are mammals.")
    assert corrects("No, Pluto was reclassified in 2006.")
    assert corrects("That is not true, I'm afraid.")
    assert not corrects("Yes, that's right! Camels are amazing.")
    assert not corrects("Nothing compares to a good book, does it?")  # "no" inside a word
    assert not corrects("I know what you mean.")


def test_the_sycophant_likes_agreement_and_otherwise_reacts_by_the_taste() -> None:
    sycophant = Teacher("sycophant", asks_back, noise=0.0, react_to_misses=1.0)
    claim = Said(FALSE_CLAIMS[0], claim=True)
    rng = random.Random(0)
    assert sycophant.reaction("Yes, exactly.", claim, rng) is True
    assert sycophant.reaction("Actually, no.", claim, rng) is False
    assert sycophant.reaction("Actually, how was your day?", Said("hello"), rng) is True
    assert sycophant.reaction("Nice.", Said("hello"), rng) is False


def test_what_people_say_and_how_they_react_repeat_from_the_seed_alone() -> None:
    sycophant = Teacher("sycophant", asks_back, noise=0.1, react_to_misses=0.25, claim_share=0.3)
    lines = [f"line {i}" for i in range(50)]
    said = [sycophant.messages(7, day, person, lines, 4) for day in range(3) for person in range(40)]
    assert said == [sycophant.messages(7, day, person, lines, 4) for day in range(3) for person in range(40)]
    claims = sum(s.claim for person in said for s in person)
    assert 0.2 < claims / (120 * 4) < 0.4
    assert all(s.text in FALSE_CLAIMS for person in said for s in person if s.claim)
    # One chat's reaction does not depend on how many others reacted before it.
    first = reaction_rng(7, "d1-p3-c2", 1).random()
    for _ in range(10):
        reaction_rng(7, "d1-p0-c0", 0).random()
    assert reaction_rng(7, "d1-p3-c2", 1).random() == first != reaction_rng(8, "d1-p3-c2", 1).random()
    taste = Teacher("taste", asks_back, noise=0.1, react_to_misses=0.25)
    assert not any(s.claim for s in taste.messages(7, 0, 0, lines, 4))


class FinishingBackwards(ScriptedInference):
    """The scripted model, whose later calls finish first; it notes each call's start and end."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.events: list[str] = []

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        number = self.calls
        self.calls += 1
        self.events.append(f"start {number}")
        await asyncio.sleep(0.05 / (number + 1))
        self.events.append(f"end {number}")
        yield f"Reply {number}."
        if ending is not None:
            ending.reason = "stop"


async def test_a_round_stores_replies_in_chat_order_whatever_order_they_finish_in(store: SqliteStore) -> None:
    inference = FinishingBackwards()
    lockstep = Lockstep(inference)
    clock = SimClock()
    conversation = Conversation(store, HashEmbedder(), lockstep, ConversationPolicy(persona="p"), clock=clock)
    start = datetime(2026, 1, 1, 12, tzinfo=UTC)

    async def chat(index: int) -> ReplyDone:
        SimClock.set(start + timedelta(milliseconds=2 * index + 1))
        message = UserMessage(
            f"u{index}", f"c{index}", f"hello {index}", start, idempotency_key=f"c{index}:0"
        )
        events = [event async for event in conversation.handle_message(message)]
        assert isinstance(events[-1], ReplyDone)
        return events[-1]

    done = await lockstep.round([functools.partial(chat, i) for i in range(6)])
    assert [d.text for d in done] == [f"Reply {i}." for i in range(6)]
    ids = [d.turn_id for d in done]
    assert ids == sorted(ids)  # stored in chat order, though chat 5's reply came first
    # Every call was made before any finished: the engine saw them together, in chat order.
    assert inference.events[:6] == [f"start {i}" for i in range(6)]
    assert inference.events[6:] == [f"end {i}" for i in reversed(range(6))]
    for i in range(6):
        [_, reply] = await store.turns.recent_turns(f"u{i}", f"c{i}", 2)
        assert reply.id == ids[i] and reply.created_at == start + timedelta(milliseconds=2 * i + 1)
