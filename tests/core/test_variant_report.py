"""What admins see of variants and the canary ([canary]): the intervals against scipy's, the report
read from a real store (both kinds), the history thinned for a chart, a canary stopped once, and
the words `/canary` answers with."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta

import pytest
from scipy import stats

from bot.core.learning.canary import stop as stop_canary
from bot.core.learning.models import CanaryEntry, NewCanary, Variant, VariantStats
from bot.core.learning.reward import RewardWeights
from bot.core.learning.variant_report import (
    NOTHING_TO_STOP,
    canary_state,
    history_points,
    mean_interval,
    stats_json,
    status_report,
    stopped_text,
    wilson,
)
from bot.core.models import Feedback, Generation
from bot.core.store import Store
from tests.store.test_contract import T0
from tests.store.test_learning_contract import prompt, reply

HOUR = timedelta(hours=1)
NOW = T0 + 2 * HOUR


def made(adapter: int | None = None, rm: int | None = None, n: int = 1, arm: str = "serving",
         canary: int | None = None) -> Generation:  # fmt: skip
    return Generation(prompt("hi"), adapter, False, base_model="smol", reward_model_version=rm, n=n,
                      arm=arm, canary_id=canary)  # type: ignore[arg-type]  # fmt: skip


def point(i: int, lower: float, upper: float, n_canary: int = 0, n_serving: int = 0) -> dict[str, object]:
    return {
        "at": (T0 + i * timedelta(minutes=1)).isoformat(), "estimate": (lower + upper) / 2,
        "lower": lower, "upper": upper, "n_canary": n_canary, "n_serving": n_serving,
        "mean_canary": 0.4, "mean_serving": 0.1,
    }  # fmt: skip


@pytest.mark.parametrize(("k", "n"), [(0, 1), (0, 10), (3, 10), (8, 10), (10, 10), (37, 200), (1, 3)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(k, n) == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_no_rated_reply_has_no_rate_and_one_reply_no_spread() -> None:
    assert wilson(0, 0) is None
    assert mean_interval(1.0, 1.0, 1) is None and mean_interval(0.0, 0.0, 0) is None
    assert mean_interval(2.0, 2.0, 2) == (1.0, 1.0)  # two equal values: no spread


@pytest.mark.parametrize("values", [[1.0, -1.0, 1.0, 1.0], [0.5, 0.0, 0.0, 2.0, -1.0, 0.25], [3.0, 3.5]])
def test_the_mean_interval_is_the_samples_normal_interval(values: list[float]) -> None:
    mean, sem = sum(values) / len(values), stats.sem(values)
    found = mean_interval(sum(values), sum(v * v for v in values), len(values))
    assert found == pytest.approx((mean - 1.959963984540054 * sem, mean + 1.959963984540054 * sem))


def test_a_variants_row_as_json() -> None:
    row = VariantStats(Variant(3, 2, 4), "smol", "canary", replies=10, rated=8, positive=6, negative=1,
                       reward_sum=5.0, reward_squares=9.0)  # fmt: skip
    shown = stats_json(row)
    assert shown["variant"] == {"adapter": 3, "reward_model": 2, "n": 4,
                                "describe": "adapter v3 with reward model r2, best of 4"}  # fmt: skip
    assert (shown["arm"], shown["replies"], shown["rated"]) == ("canary", 10, 8)
    assert shown["positive_rate"] == 0.75 and shown["negative_rate"] == 0.125
    assert shown["positive_interval"] == pytest.approx(list(wilson(6, 8) or ()))
    assert shown["mean_reward"] == 0.5 and shown["mean_reward_interval"] == pytest.approx(
        list(mean_interval(5.0, 9.0, 10) or ())
    )
    unrated = stats_json(dataclasses.replace(row, rated=0, positive=0, negative=0, replies=1))
    assert unrated["positive_rate"] is None and unrated["positive_interval"] is None
    assert unrated["mean_reward_interval"] is None
    json.dumps(shown, allow_nan=False)


def test_the_history_is_thinned_keeping_its_first_and_last_point() -> None:
    history = [point(i, -1.0 + i / 1000, 1.0) for i in range(1000)]
    thinned = history_points(history, 240)
    assert len(thinned) == 240 and thinned[0]["at"] == history[0]["at"] and thinned[-1] == history[-1]
    assert history_points(history[:5], 240) == history[:5]
    odd = history_points([{"at": "t", "lower": float("-inf"), "upper": True, "estimate": "x", "secret": 1}])
    assert odd == [{"at": "t", **{k: None for k in ("estimate", "lower", "upper", "n_canary", "n_serving",
                                                    "mean_canary", "mean_serving")}}]  # fmt: skip


async def add_reply(store: Store, generation: Generation, value: float | None, key: str) -> int:
    at = T0 + HOUR + timedelta(minutes=1)  # after the running canary started
    new = dataclasses.replace(reply("ann", key=key, at=at), generation=generation)
    turn = await store.turns.add_turn(new)
    if value is not None:
        await store.turns.record_feedback(Feedback(turn.id, "ann", "x", value, T0))
    return turn.id


async def test_the_report_reads_variants_and_canaries_from_the_store(any_store: Store) -> None:
    trials = any_store.trials
    first = await trials.start_canary(NewCanary("smol", Variant(2), Variant(), 0.2, 7, {"alpha": 0.01}), T0)
    assert first is not None
    await trials.decide_canary(first.id, "harm", "upper bound −0.02 fell below 0", T0 + HOUR)
    policy = {"alpha": 0.01, "cap": 20, "note": "not a number: never shown"}
    running = await trials.start_canary(NewCanary("smol", Variant(5), Variant(), 0.5, 9, policy), T0 + HOUR)
    assert running is not None
    ids = [
        await add_reply(any_store, made(5, arm="canary", canary=running.id), value, f"c{i}")
        for i, value in enumerate((1.0, 1.0, -1.0, None))
    ]
    for i, value in enumerate((1.0, -1.0, -1.0)):
        await add_reply(any_store, made(canary=running.id), value, f"s{i}")
    history = [point(0, -2.0, 2.5, 1, 1), point(1, -0.3, 0.9, 3, 3)]
    entry = CanaryEntry(ids[0], "canary", "ann", "d", 1.0, True)
    assert await trials.enter(running.id, [entry], {}, history, before={})

    report = await status_report(trials, NOW, days=1, weights=RewardWeights(alpha=1.0, gamma=1.0))
    json.dumps(report, allow_nan=False)
    assert report["days"] == 1 and report["since"] == (NOW - timedelta(days=1)).isoformat()
    rows = {(r["variant"]["adapter"], r["arm"]): r for r in report["variants"]}
    assert set(rows) == {(None, "serving"), (5, "canary")}
    canary_row = rows[(5, "canary")]
    assert (canary_row["replies"], canary_row["rated"], canary_row["positive"], canary_row["negative"]) == (
        4, 3, 2, 1
    )  # fmt: skip
    assert canary_row["mean_reward"] == pytest.approx(0.25)  # (1 + 1 − 1 + 0) / 4
    canary = report["canary"]
    assert canary["id"] == running.id and canary["status"] == "running" and canary["decision"] is None
    assert canary["candidate"]["describe"] == "adapter v5"
    assert canary["serving"]["describe"] == "the base model"
    assert canary["policy"] == {"alpha": 0.01, "cap": 20}
    assert canary["bounds"] == pytest.approx({"estimate": 0.3, "lower": -0.3, "upper": 0.9})
    assert canary["arms"]["canary"]["entered"] == 3 and canary["arms"]["serving"]["mean_reward"] == 0.1
    assert canary["arms"]["canary"]["reactions"]["positive"] == 2
    assert canary["arms"]["serving"]["reactions"]["negative"] == 2
    assert [p["lower"] for p in canary["history"]] == [-2.0, -0.3]
    [decided] = report["decided"]
    assert (decided["id"], decided["decision"], decided["reason"]) == (
        first.id, "harm", "upper bound −0.02 fell below 0"
    )  # fmt: skip
    assert decided["bounds"] is None and decided["history"] == []
    assert "reactions" not in decided["arms"]["canary"]


async def test_stopping_ends_the_running_canary_once_and_serving_stays(any_store: Store) -> None:
    canary = await any_store.trials.start_canary(NewCanary("smol", Variant(4), Variant(), 0.2, 1, {}), T0)
    assert canary is not None
    stopped = await stop_canary(any_store.trials, "stopped by an admin: too slow", NOW)
    assert stopped is not None and stopped.status == "stopped" and stopped.decided_at == NOW
    assert stopped_text(stopped) == f"Stopped canary {canary.id} (adapter v4); the base model keeps serving."
    assert await any_store.trials.running_canary() is None
    assert await any_store.adapters.serving_adapter() is None
    assert await stop_canary(any_store.trials, "again", NOW) is None
    assert stopped_text(None) == NOTHING_TO_STOP


async def test_canary_state_in_words(store: Store) -> None:
    assert await canary_state(store.trials) == "No canary is running, and none has run yet."
    started = await store.trials.start_canary(
        NewCanary("smol", Variant(None, 2, 4), Variant(3), 0.25, 1, {"alpha": 0.01}), T0
    )
    assert started is not None
    assert await canary_state(store.trials) == (
        f"Canary {started.id} is running since 2026-08-01 09:30 UTC: the base model with reward model r2, "
        "best of 4 answers 25% of replies on smol, adapter v3 the rest.\n"
        "No reply has entered its test yet.\n"
        "/canary stop stops it; the serving variant keeps serving."
    )
    empty = {"at": "x", "estimate": None, "lower": None, "upper": None}
    await store.trials.enter(started.id, [], {}, [empty], before={})
    assert "No reply has entered its test yet." in await canary_state(store.trials)
    await store.trials.enter(started.id, [], {}, [point(0, 0.02, 0.61, 130, 410)], before={})
    shown = await canary_state(store.trials)
    assert "Entered: 130 canary and 410 serving replies; mean R +0.4 against +0.1." in shown
    assert "Difference +0.315, 99% bounds +0.02 to +0.61." in shown
    await store.trials.decide_canary(started.id, "promoted", "lower bound +0.02 cleared 0", NOW)
    shown = await canary_state(store.trials)
    assert shown.startswith(f"No canary is running. The last one:\nCanary {started.id} (the base model")
    assert "ended 2026-08-01 11:30 UTC: promoted." in shown
    assert shown.endswith("Reason: lower bound +0.02 cleared 0")
