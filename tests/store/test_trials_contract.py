"""The trials part of the store contract ([canary]), on SQLite and on Postgres + pgvector: each reply's
variant kept with it, reward models, one canary at a time, entries counted once, a decision that
serves what it promoted in the same transaction, and statistics per variant."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import pytest

from bot.core.errors import InvalidInput
from bot.core.learning.models import CanaryEntry, NewCanary, NewRewardModel, Variant
from bot.core.models import Feedback, Generation
from bot.core.store import Store
from tests.store.test_contract import T0
from tests.store.test_learning_contract import SINCE, UNTIL, prompt, react, reply
from tests.store.test_registry_contract import candidate

HOUR = timedelta(hours=1)


def made(
    adapter: int | None = None,
    rm: int | None = None,
    n: int = 1,
    arm: str = "serving",
    canary: int | None = None,
) -> Generation:
    return Generation(
        prompt("hi"), adapter, False, base_model="smol", reward_model_version=rm, n=n, persona="Kind",
        arm=arm, canary_id=canary,  # type: ignore[arg-type]
    )  # fmt: skip


def new_canary(candidate: Variant, serving: Variant | None = None) -> NewCanary:
    return NewCanary("smol", candidate, serving or Variant(), 0.5, 1234, {"alpha": 0.01})


async def test_a_replys_variant_round_trips(store: Store) -> None:
    generation = made(adapter=3, rm=2, n=4, arm="canary", canary=9)
    stored = await store.turns.add_turn(dataclasses.replace(reply("ann"), generation=generation))
    await react(store, stored.id, 1.0)
    [rated] = await store.learning.rated_replies(SINCE, UNTIL)
    assert rated.generation == generation


async def test_reward_models_ascend_and_one_serves_through_a_canary(store: Store) -> None:
    first = await store.trials.add_reward_model(NewRewardModel("mini", {"w": [1.0]}, {"auc": 0.7}), T0)
    second = await store.trials.add_reward_model(NewRewardModel("mini", {"w": [2.0]}, {"auc": 0.8}), T0)
    assert first.version < second.version and first.model == {"w": [1.0]} and first.report == {"auc": 0.7}
    assert await store.trials.get_reward_model(first.version) == first
    assert [m.version for m in await store.trials.list_reward_models(10)] == [second.version, first.version]
    assert await store.trials.serving_reward_model() is None
    with pytest.raises(InvalidInput):
        await store.trials.set_reward_model_status(first.version, "serving")
    with pytest.raises(InvalidInput):
        await store.trials.add_reward_model(NewRewardModel("mini", {}, {}, status="serving"), T0)
    canary = await store.trials.start_canary(new_canary(Variant(None, first.version, 4)), T0)
    assert canary is not None
    decided = await store.trials.decide_canary(canary.id, "promoted", "better", T0 + HOUR)
    assert decided is not None and decided.status == "promoted" and decided.decided_at == T0 + HOUR
    serving = await store.trials.serving_reward_model()
    assert serving is not None and serving.version == first.version and serving.promoted_at == T0 + HOUR


async def test_one_canary_at_a_time_however_starts_race(store: Store) -> None:
    started = await asyncio.gather(*(store.trials.start_canary(new_canary(Variant(i)), T0) for i in range(5)))
    running = [c for c in started if c is not None]
    assert len(running) == 1
    assert await store.trials.running_canary() == running[0]
    assert running[0].policy == {"alpha": 0.01} and running[0].history == () and running[0].test == {}
    await store.trials.decide_canary(running[0].id, "expired", "undecided", T0)
    assert await store.trials.running_canary() is None
    assert await store.trials.decide_canary(running[0].id, "harm", "late", T0) is None  # decided once
    assert await store.trials.start_canary(new_canary(Variant(9)), T0) is not None


async def test_a_promotion_serves_the_adapter_and_harm_fails_it(store: Store) -> None:
    v1 = await store.adapters.add_adapter(candidate("v1"))
    v2 = await store.adapters.add_adapter(candidate("v2"))
    await store.adapters.promote_adapter(v1.version, T0)
    canary = await store.trials.start_canary(new_canary(Variant(v2.version), Variant(v1.version)), T0)
    assert canary is not None
    await store.trials.decide_canary(canary.id, "harm", "worse", T0)
    assert (await store.adapters.get_adapter(v2.version)).status == "failed"  # type: ignore[union-attr]
    assert (await store.adapters.serving_adapter()).version == v1.version  # type: ignore[union-attr]
    v3 = await store.adapters.add_adapter(candidate("v3"))
    canary = await store.trials.start_canary(new_canary(Variant(v3.version), Variant(v1.version)), T0)
    assert canary is not None
    await store.trials.decide_canary(canary.id, "promoted", "better", T0)
    assert (await store.adapters.serving_adapter()).version == v3.version  # type: ignore[union-attr]
    assert (await store.adapters.get_adapter(v1.version)).status == "retired"  # type: ignore[union-attr]


async def test_replies_enter_once_and_only_while_it_runs(store: Store) -> None:
    canary = await store.trials.start_canary(new_canary(Variant(5)), T0)
    assert canary is not None
    turns = []
    for i, arm in enumerate(["canary", "serving", "canary"]):
        generation = made(adapter=5 if arm == "canary" else None, arm=arm, canary=canary.id)
        turn = dataclasses.replace(reply("ann", at=T0 + i * HOUR, key=f"k{i}"), generation=generation)
        turns.append(await store.turns.add_turn(turn))
    outside = await store.turns.add_turn(dataclasses.replace(reply("bob", key="out"), generation=made()))
    pending = await store.trials.pending_replies(canary.id, T0 + 90 * timedelta(minutes=1), 10)
    assert [p.turn_id for p in pending] == [turns[0].id, turns[1].id]
    assert pending[0].arm == "canary" and pending[0].variant == Variant(5)
    assert pending[1].variant == Variant(None) and outside.id not in [p.turn_id for p in pending]
    entries = [
        CanaryEntry(turns[0].id, "canary", "ann", "2026-12-04", 1.0, True),
        CanaryEntry(turns[1].id, "serving", "ann", "2026-12-04", -1.0, False, "capped"),
    ]
    assert await store.trials.enter(canary.id, entries, {"n": 1}, [{"lower": -1.0}], before={})
    # Again, over the state it moved to: the entry is kept once.
    assert await store.trials.enter(canary.id, entries[:1], {"n": 2}, [{"lower": -0.5}], before={"n": 1})
    # Over a state it has moved on from (another pass got there first): nothing is written.
    assert not await store.trials.enter(canary.id, [], {"n": 9}, [{"lower": 9.0}], before={"n": 1})
    assert await store.trials.entries(canary.id) == entries
    assert await store.trials.counted(canary.id, "ann", "canary", "2026-12-04") == 1
    assert await store.trials.counted(canary.id, "ann", "serving", "2026-12-04") == 0
    assert await store.trials.people(canary.id) == {"canary": 1}
    later = await store.trials.get_canary(canary.id)
    assert later is not None and later.test == {"n": 2}
    assert later.history == ({"lower": -1.0}, {"lower": -0.5})
    still = await store.trials.pending_replies(canary.id, T0 + 5 * HOUR, 10)
    assert [p.turn_id for p in still] == [turns[2].id]
    await store.trials.decide_canary(canary.id, "stopped", "admin", T0)
    assert not await store.trials.enter(canary.id, [], {"n": 3}, [], before={"n": 2})
    assert (await store.trials.get_canary(canary.id)).test == {"n": 2}  # type: ignore[union-attr]


async def test_forgetting_a_person_takes_their_entries(store: Store) -> None:
    canary = await store.trials.start_canary(new_canary(Variant(5)), T0)
    assert canary is not None
    turn = await store.turns.add_turn(dataclasses.replace(reply("ann"), generation=made(canary=canary.id)))
    entry = CanaryEntry(turn.id, "serving", "ann", "d", 0.0, True)
    await store.trials.enter(canary.id, [entry], {}, [], before={})
    await store.memories.forget_all("ann")
    assert await store.trials.entries(canary.id) == []


async def test_variant_stats_count_reactions_and_signals(store: Store) -> None:
    rows = [(made(), 1.0), (made(), -1.0), (made(), None), (made(adapter=2, rm=1, n=4), 1.0)]
    ids = []
    for i, (generation, value) in enumerate(rows):
        turn = await store.turns.add_turn(
            dataclasses.replace(reply("ann", key=f"s{i}"), generation=generation)
        )
        ids.append(turn.id)
        if value is not None:
            await store.turns.record_feedback(Feedback(turn.id, "ann", "x", value, T0))
    await store.rewards.record_signal(ids[3], "tool_use", "app-1", T0)
    base, tuned = await store.trials.variant_stats(SINCE, alpha=1.0, gamma=1.0)
    assert (base.variant, base.replies, base.rated, base.positive, base.negative) == (Variant(), 3, 2, 1, 1)
    assert (base.reward_sum, base.reward_squares, base.base_model, base.arm) == (0.0, 2.0, "smol", "serving")
    assert (tuned.variant, tuned.replies) == (Variant(2, 1, 4), 1)
    assert (tuned.reward_sum, tuned.reward_squares) == (2.0, 4.0)
