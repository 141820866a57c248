"""The canary's lifecycle on a real SQLite store ([canary]): replies enter its test once, when their
reward is final; a clear winner is promoted and serves, a clear loser is stopped for harm, an
undecided one expires; one person cannot decide it; a missing adapter, a rollback, an admin's stop
and reactions that change after entry are handled as the docs say."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from datetime import UTC, datetime, timedelta

from bot.core.learning import RewardWeights
from bot.core.learning.canary import CanaryPolicy, advance, arm_for, start, stop
from bot.core.learning.models import Canary, NewAdapter, Variant
from bot.core.learning.variant_report import status_report
from bot.core.models import Feedback, Generation
from bot.core.store import Store
from tests.store.test_learning_contract import prompt, reply

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
WEIGHTS = RewardWeights(beta=0.0)  # the reaction alone, so each test's rewards are what it gives
POLICY = CanaryPolicy(share=0.5, per_person_daily=20, min_people=3, min_per_arm=10)


async def adapter(store: Store, path: str = "v1") -> int:
    record = await store.adapters.add_adapter(
        NewAdapter("global", "smol", path, T0 - timedelta(days=14), T0, gate={"passed": True})
    )
    return record.version


async def trial(store: Store, policy: CanaryPolicy = POLICY) -> tuple[Canary, int]:
    version = await adapter(store)
    canary = await start(store, "smol", Variant(version), Variant(), policy, seed=7, at=T0)
    assert canary is not None
    return canary, version


async def one(
    store: Store,
    canary: Canary,
    version: int,
    user: str,
    arm: str,
    value: float | None,
    at: datetime,
    key: str,
) -> int:
    generation = Generation(
        prompt("hi"), version if arm == "canary" else None, False, base_model="smol",
        arm=arm, canary_id=canary.id,  # type: ignore[arg-type]
    )  # fmt: skip
    turn = dataclasses.replace(reply(user, at=at, key=key), generation=generation)
    stored = await store.turns.add_turn(turn)
    if value is not None:
        await store.turns.record_feedback(Feedback(stored.id, user, "x", value, at))
    return stored.id


async def replies(
    store: Store,
    canary: Canary,
    version: int,
    *,
    people: int,
    each: int,
    value: dict[str, float | None],
    at: datetime = T0,
    tag: str = "",
) -> list[int]:
    """`each` replies per arm for each person; `value[arm]`: the reaction each gets (None: none)."""
    ids = []
    for person in range(people):
        user = f"p{person}"
        for arm in ("canary", "serving"):
            for i in range(each):
                key = f"{tag}{user}:{arm}:{i}"
                ids.append(await one(store, canary, version, user, arm, value[arm], at, key))
    return ids


def test_the_arm_is_drawn_per_message_from_the_seed() -> None:
    arms = [arm_for(7, f"chat:{i}", 0.2) for i in range(5000)]
    assert arms == [arm_for(7, f"chat:{i}", 0.2) for i in range(5000)]  # the same key, the same arm
    assert 0.18 < arms.count("canary") / len(arms) < 0.22
    assert arms != [arm_for(8, f"chat:{i}", 0.2) for i in range(5000)]


async def test_a_reply_enters_once_when_its_reward_is_final(store: Store) -> None:
    canary, version = await trial(store)
    await replies(store, canary, version, people=1, each=2, value={"canary": 1.0, "serving": None})
    early = await advance(store, WEIGHTS, T0 + timedelta(minutes=30))
    assert (early.entered, early.decision) == (0, None)  # not settled yet
    later = await advance(store, WEIGHTS, T0 + 2 * HOUR)
    assert (later.entered, later.counted) == (4, 4)
    assert (await advance(store, WEIGHTS, T0 + 3 * HOUR)).entered == 0  # never twice
    entries = await store.trials.entries(canary.id)
    assert sorted(e.reward for e in entries) == [0.0, 0.0, 1.0, 1.0]


async def test_a_clearly_better_canary_is_promoted_and_serves(store: Store) -> None:
    canary, version = await trial(store)
    await replies(store, canary, version, people=5, each=15, value={"canary": 1.0, "serving": -1.0})
    done = await advance(store, WEIGHTS, T0 + 2 * HOUR)
    assert done.decision == "promoted" and "lower bound" in done.reason
    serving = await store.adapters.serving_adapter()
    assert serving is not None and serving.version == version
    decided = await store.trials.get_canary(canary.id)
    assert decided is not None and decided.status == "promoted" and decided.history
    assert decided.history[-1]["lower"] > 0
    assert await store.trials.running_canary() is None


async def test_a_clearly_worse_canary_is_stopped_for_harm(store: Store) -> None:
    canary, version = await trial(store)
    await replies(store, canary, version, people=5, each=15, value={"canary": -1.0, "serving": 1.0})
    done = await advance(store, WEIGHTS, T0 + 2 * HOUR)
    assert done.decision == "harm" and "upper bound" in done.reason
    assert await store.adapters.serving_adapter() is None  # the base model still serves
    failed = await store.adapters.get_adapter(version)
    assert failed is not None and failed.status == "failed"


async def test_one_person_reacting_to_everything_cannot_force_it(store: Store) -> None:
    canary, version = await trial(store)
    for day in range(3):
        await replies(
            store, canary, version, people=1, each=60, value={"canary": 1.0, "serving": -1.0},
            at=T0 + day * 24 * HOUR, tag=f"d{day}",
        )  # fmt: skip
    done = await advance(store, WEIGHTS, T0 + 80 * HOUR)
    assert done.decision is None and done.counted == 3 * 2 * POLICY.per_person_daily
    entries = await store.trials.entries(canary.id)
    assert sum(not e.counted for e in entries) == 3 * 2 * 40  # logged, not counted
    assert all("already counted" in e.note for e in entries if not e.counted)
    assert (await store.trials.running_canary()) is not None


async def test_one_enthusiast_among_people_reacting_by_chance_is_capped(store: Store) -> None:
    canary, version = await trial(store)
    rng = random.Random(3)
    await replies(store, canary, version, people=1, each=200, value={"canary": 1.0, "serving": -1.0})
    for person in range(1, 10):
        for arm in ("canary", "serving"):
            for i in range(20):
                value = rng.choice((1.0, -1.0))
                await one(store, canary, version, f"q{person}", arm, value, T0, f"q{person}:{arm}:{i}")
    done = await advance(store, WEIGHTS, T0 + 2 * HOUR)
    assert done.decision is None


async def test_an_undecided_canary_expires(store: Store) -> None:
    canary, version = await trial(store, dataclasses.replace(POLICY, max_days=1.0))
    await replies(store, canary, version, people=5, each=4, value={"canary": 1.0, "serving": 1.0})
    assert (await advance(store, WEIGHTS, T0 + 2 * HOUR)).decision is None
    done = await advance(store, WEIGHTS, T0 + 25 * HOUR)
    assert done.decision == "expired" and done.reason.startswith("undecided after")
    assert await store.adapters.serving_adapter() is None


async def test_a_canary_with_no_traffic_expires_undecided(store: Store) -> None:
    await trial(store)
    assert (await advance(store, WEIGHTS, T0 + 24 * HOUR)).decision is None
    assert (await advance(store, WEIGHTS, T0 + 8 * 24 * HOUR)).decision == "expired"


async def test_reactions_changed_after_entry_stay_out_of_the_test(store: Store) -> None:
    canary, version = await trial(store)
    ids = await replies(store, canary, version, people=1, each=1, value={"canary": 1.0, "serving": None})
    await advance(store, WEIGHTS, T0 + 2 * HOUR)
    before = await store.trials.get_canary(canary.id)
    await store.turns.record_feedback(Feedback(ids[0], "p0", "y", -1.0, T0 + 3 * HOUR))  # changed
    await store.turns.record_feedback(Feedback(ids[1], "p0", "y", 1.0, T0 + 3 * HOUR))  # added
    await advance(store, WEIGHTS, T0 + 4 * HOUR)
    after = await store.trials.get_canary(canary.id)
    assert before is not None and after is not None and after.test == before.test
    assert [e.reward for e in await store.trials.entries(canary.id)] == [1.0, 0.0]
    # Shown where admins look (`kindred adapters status`, /admin), never fed back.
    report = await status_report(store.trials, T0 + 4 * HOUR, weights=WEIGHTS, rewards=store.rewards)
    late = report["canary"]["changed_after_entry"]
    assert (late["checked"], late["count"]) == (2, 2)
    assert {(r["entered"], r["now"]) for r in late["replies"]} == {(1.0, -1.0), (0.0, 1.0)}


async def test_a_missing_adapter_stops_the_canary(store: Store) -> None:
    _canary, _ = await trial(store)

    async def gone(version: int) -> bool:
        return False

    done = await advance(store, WEIGHTS, T0 + HOUR, adapter_present=gone)
    assert done.decision == "stopped" and "missing" in done.reason
    assert await store.trials.running_canary() is None


async def test_a_rollback_under_a_canary_stops_it(store: Store) -> None:
    _canary, _ = await trial(store)
    other = await adapter(store, "v0")
    await store.adapters.promote_adapter(other, T0)  # what serves changed by hand
    done = await advance(store, WEIGHTS, T0 + HOUR)
    assert done.decision == "stopped" and "changed" in done.reason


async def test_an_admin_stops_it_and_replies_of_a_retired_canary_enter_nothing(store: Store) -> None:
    canary, version = await trial(store)
    await replies(store, canary, version, people=5, each=15, value={"canary": 1.0, "serving": -1.0})
    stopped = await stop(store.trials, "admin: not now", T0 + HOUR)
    assert stopped is not None and stopped.status == "stopped" and stopped.reason == "admin: not now"
    assert await stop(store.trials, "again", T0 + HOUR) is None
    done = await advance(store, WEIGHTS, T0 + 2 * HOUR)
    assert done.canary is None and await store.trials.entries(canary.id) == []
    assert await store.adapters.serving_adapter() is None


async def test_a_fallback_reply_is_logged_but_not_counted(store: Store) -> None:
    canary, _version = await trial(store)
    generation = Generation(prompt("hi"), None, False, base_model="smol", arm="canary", canary_id=canary.id)
    turn = await store.turns.add_turn(dataclasses.replace(reply("ann", key="fb"), generation=generation))
    await advance(store, WEIGHTS, T0 + 2 * HOUR)
    [entry] = await store.trials.entries(canary.id)
    assert entry.turn_id == turn.id and not entry.counted and "fallback" in entry.note


async def test_a_reaction_removed_before_the_reply_settles_enters_as_none(store: Store) -> None:
    canary, version = await trial(store)
    value: dict[str, float | None] = {"canary": 1.0, "serving": None}
    [liked, _] = await replies(store, canary, version, people=1, each=1, value=value)
    await store.turns.remove_feedback(liked, "p0", "reaction")
    await advance(store, WEIGHTS, T0 + 2 * HOUR)
    assert [e.reward for e in await store.trials.entries(canary.id)] == [0.0, 0.0]


async def test_two_passes_at_once_enter_each_reply_once_and_decide_once(store: Store) -> None:
    canary, version = await trial(store)
    await replies(store, canary, version, people=5, each=15, value={"canary": 1.0, "serving": -1.0})
    first, second = await asyncio.gather(
        advance(store, WEIGHTS, T0 + 2 * HOUR), advance(store, WEIGHTS, T0 + 2 * HOUR)
    )
    assert [first.decision, second.decision].count("promoted") == 1
    assert len(await store.trials.entries(canary.id)) == 5 * 2 * 15
    assert len(await store.trials.list_canaries(5)) == 1 and await store.trials.running_canary() is None


async def test_reactions_on_a_retired_canarys_replies_are_kept_like_any_other(store: Store) -> None:
    canary, version = await trial(store)
    ids = await replies(store, canary, version, people=5, each=15, value={"canary": -1.0, "serving": 1.0})
    assert (await advance(store, WEIGHTS, T0 + 2 * HOUR)).decision == "harm"
    await store.turns.record_feedback(Feedback(ids[0], "p0", "🔥", 1.0, T0 + 3 * HOUR))
    stats = await store.trials.variant_stats(T0 - HOUR, alpha=1.0, gamma=1.0)
    tried = next(s for s in stats if s.variant == Variant(version))
    assert tried.replies == 5 * 15 and tried.positive == 1
    assert (await advance(store, WEIGHTS, T0 + 4 * HOUR)).canary is None
