"""Reactions become reward: the conversation keeps each used memory's share, a reaction credits the
memories by it, an undo or a change moves the credit exactly, and one reply's reward is explained
part by part. On a real SQLite store, with the hashed embedder and the scripted model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import Reaction, ReplyDone, UserMessage
from bot.core.learning.reward import DEFAULT_REACTIONS, RewardWeights, reply_reward, turns_followed
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.operations import import_items
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
WEIGHTS = RewardWeights(alpha=2.0, beta=0.5, gamma=3.0, session_gap=timedelta(minutes=30))


def make(store: SqliteStore) -> Conversation:
    policy = ConversationPolicy(persona="p", recent_turns=0, reactions=DEFAULT_REACTIONS, reward=WEIGHTS)
    return Conversation(store, HashEmbedder(), ScriptedInference(), policy)


async def ask(conv: Conversation, text: str, at: datetime = T0) -> ReplyDone:
    events = [event async for event in conv.handle_message(UserMessage("ann", "c1", text, at))]
    assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None
    return events[-1]


async def seeded(store: SqliteStore) -> list[int]:
    items = [
        ImportItem(1, "I love hiking in the Alps", "user", T0 - timedelta(days=3)),
        ImportItem(2, "hiking boots need new laces", "user", T0 - timedelta(days=2)),
        ImportItem(3, "my cat Miso sleeps all day", "user", T0 - timedelta(days=1)),
    ]
    return await import_items(store.memories, HashEmbedder(), "ann", items)


async def test_a_reply_keeps_its_memories_shares_of_the_retrieval_score(store: SqliteStore) -> None:
    await seeded(store)
    done = await ask(make(store), "any hiking ideas for the Alps?")
    record = await store.rewards.reply_record(done.turn_id or 0, 5)
    assert record is not None and len(record.memories) == len(done.memory_ids) >= 2
    assert {m.memory_id for m in record.memories} == set(done.memory_ids)
    assert sum(m.share for m in record.memories) == pytest.approx(1.0)
    shares = [m.share for m in record.memories]
    assert shares == sorted(shares, reverse=True) and shares[0] > shares[-1], "the best match has most"


async def test_reactions_credit_memories_and_an_undo_or_change_moves_it_exactly(store: SqliteStore) -> None:
    await seeded(store)
    conv = make(store)
    done = await ask(conv, "any hiking ideas for the Alps?")
    turn_id = done.turn_id or 0
    record = await store.rewards.reply_record(turn_id, 5)
    assert record is not None
    share = {m.memory_id: m.share for m in record.memories}

    await conv.handle_reaction(Reaction("ann", turn_id, "❤️", T0))
    assert await store.rewards.memory_rewards("ann", list(share)) == pytest.approx(share)
    await conv.handle_reaction(Reaction("ann", turn_id, "👎", T0))  # changed
    assert await store.rewards.memory_rewards("ann", list(share)) == pytest.approx(
        {m: -s for m, s in share.items()}
    )
    await conv.handle_reaction(Reaction("ann", turn_id, "", T0, removed=True))  # undone
    assert await store.rewards.memory_rewards("ann", list(share)) == {}


async def test_why_explains_one_reply_part_by_part(store: SqliteStore) -> None:
    await seeded(store)
    conv = make(store)
    done = await ask(conv, "any hiking ideas for the Alps?")
    turn_id = done.turn_id or 0
    # Two turns within the session, then a pause, then one more that no longer counts.
    await ask(conv, "thanks, and boots?", T0 + timedelta(minutes=5))
    await ask(conv, "and laces?", T0 + timedelta(minutes=20))
    await ask(conv, "good morning", T0 + timedelta(hours=9))
    await conv.handle_reaction(Reaction("ann", turn_id, "🔥", T0))
    await store.rewards.record_signal(turn_id, "tool_use", "app-7", T0)

    reward = await reply_reward(store.rewards, turn_id, WEIGHTS)

    assert reward is not None
    assert (reward.tool_uses, reward.turns_followed, reward.proactive_successes) == (1, 2, 0)
    assert (reward.reaction, reward.reactions) == (1.0, 1)
    assert reward.total == pytest.approx(2.0 * 1 + 0.5 * 2 + 3.0 * 0 + 1.0)
    assert {m.memory_id for m in reward.memories} == set(done.memory_ids)
    for credited in reward.memories:
        assert credited.credit == pytest.approx(credited.share * 1.0)
        assert credited.total == pytest.approx(credited.credit)  # the only reply that used it
    text = reward.render()
    assert f"reply #{turn_id}" in text and "R = +4.000" in text and "hiking" in text
    assert await reply_reward(store.rewards, 424_242, WEIGHTS) is None


async def test_a_reply_without_reactions_or_followers_is_worth_nothing(store: SqliteStore) -> None:
    done = await ask(make(store), "hello")
    reward = await reply_reward(store.rewards, done.turn_id or 0, WEIGHTS)
    assert reward is not None and reward.total == 0.0 and reward.memories == ()


def test_turns_followed_stop_at_the_first_long_pause() -> None:
    gap = timedelta(minutes=30)
    later = [T0 + timedelta(minutes=m) for m in (10, 35, 70, 75)]
    assert turns_followed(T0, later, gap) == 2
    assert turns_followed(T0, [], gap) == 0
    assert turns_followed(T0, [T0 + timedelta(hours=2)], gap) == 0


async def test_the_persons_statements_are_stored_with_their_kind(store: SqliteStore) -> None:
    conv = make(store)
    for text in ("I love jazz", "I'm allergic to peanuts", "We went to Rome yesterday", "ok cool"):
        await ask(conv, text)
    kinds = {m.text: (m.kind, m.speaker) for m in await store.memories.list_memories("ann", 20)}
    assert kinds["I love jazz"] == ("preference", "user")
    assert kinds["I'm allergic to peanuts"] == ("fact", "user")
    assert kinds["We went to Rome yesterday"] == ("event", "user")
    assert kinds["ok cool"] == ("turn", "user")
    # The bot's replies are kept as replies: never searched as evidence about the person.
    assert {kind for kind, speaker in kinds.values() if speaker == "assistant"} == {"reply"}
