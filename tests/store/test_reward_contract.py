"""The reward part of the store contract, on SQLite and on Postgres + pgvector: shares kept per
reply, r(m) derived from the current reactions (so a change or an undo is exact), signals counted
once, and nothing of one person's reaches another's."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from bot.core.models import Feedback, NewTurn, Reaction
from bot.core.store import Store
from tests.store.test_contract import EMB, T0, memory, turn


def reply(user: str, used: tuple[int, ...], shares: tuple[float, ...], *, at: datetime = T0) -> NewTurn:
    return NewTurn(
        user,
        "c1",
        "assistant",
        "a reply",
        EMB.vector("a reply"),
        EMB.model_name,
        at,
        used_memory_ids=used,
        memory_shares=shares,
    )


async def react(
    store: Store, turn_id: int, value: float, user: str = "ann", source: str = "reaction"
) -> None:
    await store.turns.record_feedback(Feedback(turn_id, user, "x", value, T0, source))


async def test_a_reaction_credits_each_used_memory_by_its_share(store: Store) -> None:
    a, b, c = await store.memories.add_memories([memory("ann", t) for t in ("tea", "hiking", "jazz")])
    first = await store.turns.add_turn(reply("ann", (a, b), (0.75, 0.25)))
    assert await store.rewards.memory_rewards("ann", [a, b, c]) == {}, "no reaction: no credit yet"
    await react(store, first.id, 1.0)
    assert await store.rewards.memory_rewards("ann", [a, b, c]) == pytest.approx({a: 0.75, b: 0.25})
    second = await store.turns.add_turn(reply("ann", (b, c), (0.5, 0.5)))
    await react(store, second.id, -1.0)
    assert await store.rewards.memory_rewards("ann", [a, b, c]) == pytest.approx({a: 0.75, b: -0.25, c: -0.5})


async def test_a_changed_or_undone_reaction_changes_the_credit_exactly(store: Store) -> None:
    [a] = await store.memories.add_memories([memory("ann", "tea")])
    made = await store.turns.add_turn(reply("ann", (a,), (0.4,)))
    for value in (1.0, -1.0, 1.0, -1.0, 1.0):  # back and forth: nothing accumulates
        await react(store, made.id, value)
        assert await store.rewards.memory_rewards("ann", [a]) == pytest.approx({a: 0.4 * value})
    await store.turns.remove_feedback(made.id, "ann", "reaction")
    assert await store.rewards.memory_rewards("ann", [a]) in ({}, {a: 0.0})


async def test_several_reactions_on_one_reply_count_as_their_mean(store: Store) -> None:
    [a] = await store.memories.add_memories([memory("ann", "tea")])
    made = await store.turns.add_turn(reply("ann", (a,), (1.0,)))
    await react(store, made.id, 1.0)
    await react(store, made.id, 1.0, source="button")  # the same person, twice: not double
    await react(store, made.id, -1.0, user="bob")  # someone else in a group
    assert await store.rewards.memory_rewards("ann", [a]) == pytest.approx({a: 1.0 / 3})


async def test_credit_stays_with_its_owner_and_goes_with_forget(store: Store) -> None:
    [a] = await store.memories.add_memories([memory("ann", "tea")])
    made = await store.turns.add_turn(reply("ann", (a,), (1.0,)))
    await react(store, made.id, 1.0)
    assert await store.rewards.memory_rewards("bob", [a]) == {}
    assert await store.memories.forget("ann", a)
    assert await store.rewards.memory_rewards("ann", [a]) == {}
    record = await store.rewards.reply_record(made.id, 5)
    assert record is not None and record.memories == ()


async def test_forget_all_takes_the_reward_records_too(store: Store) -> None:
    [a] = await store.memories.add_memories([memory("ann", "tea")])
    made = await store.turns.add_turn(reply("ann", (a,), (1.0,)))
    await store.rewards.record_signal(made.id, "tool_use", "app-1", T0)
    await react(store, made.id, 1.0)
    await store.memories.forget_all("ann")
    assert await store.rewards.reply_record(made.id, 5) is None
    assert await store.rewards.memory_rewards("ann", [a]) == {}


async def test_a_reply_record_has_every_part_of_its_reward(store: Store) -> None:
    a, b = await store.memories.add_memories([memory("ann", "tea"), memory("ann", "hiking")])
    await store.turns.add_turn(turn("ann", "before"))
    made = await store.turns.add_turn(reply("ann", (a, b), (0.3, 0.7), at=T0))
    for minutes in (1, 3, 50):
        await store.turns.add_turn(turn("ann", f"later {minutes}", at=T0 + timedelta(minutes=minutes)))
    await store.turns.add_turn(turn("ann", "another chat", chat="c2", at=T0 + timedelta(minutes=2)))
    await store.turns.add_turn(turn("bob", "someone else", at=T0 + timedelta(minutes=2)))
    await react(store, made.id, 1.0)
    await react(store, made.id, -1.0, user="cy")  # someone else in the chat
    await store.rewards.record_signal(made.id, "tool_use", "app-1", T0)
    await store.rewards.record_signal(made.id, "tool_use", "app-1", T0)  # a retry: counted once
    await store.rewards.record_signal(made.id, "tool_use", "app-2", T0)

    record = await store.rewards.reply_record(made.id, 2)

    assert record is not None
    assert (record.turn_id, record.user_id, record.chat_id) == (made.id, "ann", "c1")
    assert abs(record.created_at - T0) < timedelta(milliseconds=1)
    assert record.reactions == (Reaction("ann", 1.0), Reaction("cy", -1.0))  # by person
    assert (record.tool_uses, record.proactive_successes) == (2, 0)
    assert [at - T0 for at in record.later_turns] == [timedelta(minutes=1), timedelta(minutes=3)]
    assert [(m.memory_id, m.share, m.text) for m in record.memories] == [(b, 0.7, "hiking"), (a, 0.3, "tea")]
    assert await store.rewards.reply_record(999_999, 2) is None


async def test_a_turn_stores_its_memory_under_the_kind_it_was_given(store: Store) -> None:
    stored = await store.turns.add_turn(
        NewTurn(
            "ann",
            "c1",
            "user",
            "I love jazz",
            EMB.vector("I love jazz"),
            EMB.model_name,
            T0,
            memory_kind="preference",
        )
    )
    [found] = await store.memories.list_memories("ann", 5)
    assert (found.id, found.kind) == (stored.memory_id, "preference")
