"""The canary's sequential test (bot/core/learning/sequential.py): peeking after every entry keeps
false promotions under α where a fixed-n test does not, a real lift is promoted, harm is stopped,
and the state survives JSON. The seed loops run thousands of days at once through `SequentialBatch`,
which is checked entry for entry against `SequentialTest`."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from bot.core.learning.canary_power import simulate_days, teacher_rewards
from bot.core.learning.sequential import (
    SequentialBatch,
    SequentialPolicy,
    SequentialTest,
    one_sided_boundary,
)

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]
Z_ONE_SIDED = {0.05: 1.6449, 0.01: 2.3263}  # the standard normal's 95th and 99th percentiles


def alike_days(seeds: int, replies: int, share: float, seed: int) -> tuple[BoolArray, FloatArray]:
    """Both arms from one teacher at the base's 5 %: rewards −1, 0 and +1 like reactions."""
    rng = np.random.default_rng(seed)
    canary = rng.random((seeds, replies)) < share
    return canary, teacher_rewards(rng, np.full((seeds, replies), 0.05))


def z_test_promotes(canary: BoolArray, rewards: FloatArray, alpha: float, min_per_arm: int) -> BoolArray:
    """Per day: does the one-sided fixed-n z-test of the difference in means (Welch's variance)
    clear its 1 − α quantile at any entry, looked at after every entry as the sequential test is?"""
    a = canary.astype(np.float64)
    counts = [np.cumsum(a, axis=1), np.cumsum(1 - a, axis=1)]
    sums = [np.cumsum(a * rewards, axis=1), np.cumsum((1 - a) * rewards, axis=1)]
    squares = [np.cumsum(a * rewards**2, axis=1), np.cumsum((1 - a) * rewards**2, axis=1)]
    n = [np.maximum(c, 2) for c in counts]
    means = [s / k for s, k in zip(sums, n, strict=True)]
    variances = [(q - k * m * m) / (k - 1) for q, k, m in zip(squares, n, means, strict=True)]
    se = np.sqrt(variances[0] / n[0] + variances[1] / n[1])
    z = np.divide(means[0] - means[1], se, out=np.zeros_like(se), where=se > 0)
    ready = np.minimum(counts[0], counts[1]) >= min_per_arm
    promoted: BoolArray = ((z > Z_ONE_SIDED[alpha]) & ready).any(axis=1)
    return promoted


@pytest.mark.parametrize("share", [0.2, 0.5])
@pytest.mark.parametrize(("alpha", "seeds"), [(0.05, 2000), (0.01, 6000)])
def test_peeking_after_every_entry_keeps_false_promotions_under_alpha(
    share: float, alpha: float, seeds: int
) -> None:
    """2,000 days (6,000 at α = 0.01) of 600 replies where both arms are alike, looked at after
    every reply: the sequential test promotes on at most α of them (it is measured at about
    0.4α–0.5α), while the fixed-n z-test looked at as often promotes on several times α."""
    policy = SequentialPolicy(alpha=alpha)
    decisions, z_promoted = [], []
    for chunk in range(seeds // 1000):  # small arrays: fewer fresh pages to fault in
        canary, rewards = alike_days(1000, 600, share, seed=int(share * 10) + int(alpha * 1000) + 100 * chunk)
        batch = SequentialBatch(1000, share, policy)
        batch.add(canary, rewards)
        decisions.append(batch.decision)
        z_promoted.append(z_test_promotes(canary, rewards, alpha, policy.min_per_arm))
    decision = np.concatenate(decisions)
    false_promotions = float(np.mean(decision == 1))
    z_false_promotions = float(np.mean(np.concatenate(z_promoted)))
    assert false_promotions <= alpha, (false_promotions, alpha)
    assert z_false_promotions > 2 * alpha, (z_false_promotions, alpha)
    # Alike arms are symmetric: false harm is held under α as well.
    assert float(np.mean(decision == -1)) <= alpha


def test_an_early_canary_with_no_reactions_does_not_promote_on_its_zero_variance() -> None:
    """What the floor is for: 13 canary replies without a reaction (an arm variance of 0, which
    happens on 1 % of days when 30 % of replies are frowned at) against a serving arm with its
    frowns. Each arm's variance taken as measured would promote; floored at the pooled
    variance, the bound stays below 0."""
    policy = SequentialPolicy(alpha=0.01)
    test = SequentialTest(share=0.2, policy=policy)
    serving = [-1.0 if i % 10 in (0, 3, 6) else 0.0 for i in range(40)]
    for i, reward in enumerate(serving):
        test.add("serving", reward)
        if i % 3 == 1:
            test.add("canary", 0.0)
    bounds = test.bounds()
    assert (bounds.n_canary, bounds.n_serving, bounds.mean_canary) == (13, 40, 0.0)
    assert test.decision() is None and bounds.lower < 0 < bounds.estimate
    scored = test.to_json()["scores"]["n"]
    assert scored == 53 - 3  # not before each arm has a past entry: serving twice, canary once
    as_measured = float(np.var(serving, ddof=1)) / (1 - 0.2)  # the canary's arm adds 0
    u = one_sided_boundary(scored, policy.alpha, policy.spread)
    assert bounds.estimate - math.sqrt(as_measured) * u / scored > 0


def test_a_25_point_lift_is_promoted_and_a_25_point_drop_is_stopped_for_harm() -> None:
    """The simulation's teacher at 30 % against 5 % (R = +1 with probability 0.29 against 0.07):
    within 600 replies at share 0.5, the better canary is promoted on most days and never
    stopped for harm; the worse one is stopped for harm and never promoted."""
    better = simulate_days(0.25, 0.05, 0.5, 600, seeds=1000, seed=11)
    assert np.mean(better.decision == 1) >= 0.9 and not np.any(better.decision == -1)
    worse = simulate_days(-0.25, 0.30, 0.5, 600, seeds=1000, seed=12)
    assert np.mean(worse.decision == -1) >= 0.9 and not np.any(worse.decision == 1)


def test_the_single_test_and_the_batch_compute_the_same_bounds_and_decisions() -> None:
    rng = np.random.default_rng(3)
    canary = rng.random((4, 300)) < 0.3
    rewards = teacher_rewards(rng, np.where(canary, 0.3, 0.05)) + rng.normal(0, 0.2, (4, 300))
    rewards[0, 5] = 7.0  # clipped to 2 by both
    batch = SequentialBatch(4, 0.3)
    blocks = [batch.add(canary[:, :120], rewards[:, :120]), batch.add(canary[:, 120:], rewards[:, 120:])]
    lower = np.concatenate([b.lower for b in blocks], axis=1)
    upper = np.concatenate([b.upper for b in blocks], axis=1)
    estimate = np.concatenate([b.estimate for b in blocks], axis=1)
    for s in range(4):
        test = SequentialTest(share=0.3)
        for j in range(300):
            test.add("canary" if canary[s, j] else "serving", float(rewards[s, j]))
            bounds = test.bounds()
            assert bounds.estimate == pytest.approx(estimate[s, j], abs=1e-9)
            assert bounds.lower == pytest.approx(lower[s, j], abs=1e-9)
            assert bounds.upper == pytest.approx(upper[s, j], abs=1e-9)
        assert test.decided_at == (int(batch.decided_at[s]) or None)
        assert test.decision() == {1: "promote", -1: "harm", 0: None}[int(batch.decision[s])]
    assert set(batch.decision) != {0}  # some day decided, so the decision paths were compared


def test_no_bound_before_each_arm_has_its_minimum() -> None:
    test = SequentialTest(share=0.5, policy=SequentialPolicy(min_per_arm=10))
    for _ in range(9):
        test.add("canary", 1.0)
        test.add("serving", -1.0)
    for _ in range(20):
        test.add("canary", 1.0)
    bounds = test.bounds()
    assert (bounds.lower, bounds.upper) == (-math.inf, math.inf) and test.decision() is None
    assert bounds.as_json()["lower"] is None and bounds.as_json()["upper"] is None
    test.add("serving", -1.0)
    assert test.decision() == "promote" and test.decided_at == 39
    assert test.bounds().lower > 0


def test_the_first_decision_stands_while_later_entries_still_count() -> None:
    test = SequentialTest(share=0.5)
    for _ in range(30):
        test.add("canary", 1.0)
        test.add("serving", -1.0)
    assert test.decision() == "promote"
    decided_at = test.decided_at
    for _ in range(200):
        test.add("canary", -1.0)
        test.add("serving", 1.0)
    assert test.bounds().upper < 0  # the data now say harm; the decision already taken stays
    assert test.decision() == "promote" and test.decided_at == decided_at
    assert test.bounds().n_canary == 230


def test_shifting_every_reward_by_a_constant_changes_no_bound() -> None:
    """The AIPW score with predictable arm means depends on differences of rewards only."""
    rng = np.random.default_rng(8)
    arms = rng.random(200) < 0.2
    rewards = teacher_rewards(rng, np.full(200, 0.2))
    plain, shifted = SequentialTest(0.2), SequentialTest(0.2)
    for arm, reward in zip(arms, rewards, strict=True):
        plain.add("canary" if arm else "serving", float(reward))
        shifted.add("canary" if arm else "serving", float(reward) + 0.5)
    a, b = plain.bounds(), shifted.bounds()
    assert (b.estimate, b.lower, b.upper) == pytest.approx((a.estimate, a.lower, a.upper), abs=1e-9)
    assert b.mean_canary == pytest.approx(a.mean_canary + 0.5)


def test_rewards_are_clipped_and_bad_input_is_refused() -> None:
    test = SequentialTest(share=0.2, policy=SequentialPolicy(reward_clip=2.0))
    test.add("canary", 100.0)
    test.add("serving", -100.0)
    assert (test.bounds().mean_canary, test.bounds().mean_serving) == (2.0, -2.0)
    with pytest.raises(ValueError, match="arm"):
        test.add("base", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        test.add("canary", math.nan)
    for share in (0.0, 1.0, math.nan):
        with pytest.raises(ValueError, match="share"):
            SequentialTest(share=share)
    with pytest.raises(ValueError, match="alpha"):
        SequentialPolicy(alpha=0.0)
    with pytest.raises(ValueError, match="min_per_arm"):
        SequentialPolicy(min_per_arm=1)


def test_the_one_sided_boundary_solves_its_mixture_and_lies_between_the_two_sided_ones() -> None:
    """u(v) makes the one-sided normal mixture equal 1/α. Since that mixture is 2Φ(·) ≥ 1 times
    the two-sided one and at most twice it, u lies between the two-sided boundaries at 2α and α."""
    policy = SequentialPolicy(alpha=0.01, planned_replies=400)
    rho = policy.spread
    assert rho == pytest.approx(400 / (2 * math.log(50) + math.log(1 + 2 * math.log(50))))
    for v in (1.0, 20.0, 400.0, 5000.0):
        s = one_sided_boundary(v, 0.01, rho)
        log_mixture = (
            math.log(2) + 0.5 * math.log(rho / (v + rho)) + s * s / (2 * (v + rho))
            + math.log(0.5 * math.erfc(-s / math.sqrt(2 * (v + rho))))
        )  # fmt: skip
        assert log_mixture == pytest.approx(math.log(100), abs=1e-9)

        def two_sided(alpha: float, v: float = v) -> float:
            return math.sqrt((v + rho) * (math.log(1 + v / rho) + 2 * math.log(1 / alpha)))

        assert two_sided(0.02) < s < two_sided(0.01)


def test_state_survives_json_and_the_restored_test_carries_on_identically() -> None:
    rng = np.random.default_rng(4)
    arms = rng.random(400) < 0.2
    rewards = teacher_rewards(rng, np.where(arms, 0.3, 0.05))
    whole, saved = SequentialTest(0.2), SequentialTest(0.2)
    for j in range(400):
        arm = "canary" if arms[j] else "serving"
        whole.add(arm, float(rewards[j]))
        saved.add(arm, float(rewards[j]))
        saved = SequentialTest.from_json(json.loads(json.dumps(saved.to_json())))
    assert saved.to_json() == whole.to_json()
    assert saved.bounds() == whole.bounds() and saved.decision() == whole.decision()
    assert json.loads(json.dumps(whole.bounds().as_json())) == whole.bounds().as_json()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.update(version=2), "version"),
        (lambda d: d["canary"].update(n=-1), "canary count"),
        (lambda d: d["serving"].update(mean=math.nan), "serving mean"),
        (lambda d: d["pooled"].update(m2=-1.0), "negative"),
        (lambda d: d["scores"].update(n=999), "add up"),
        (lambda d: d.update(decision="ship"), "decision"),
        (lambda d: d.update(decision="promote", decided_at=None), "decision"),
        (lambda d: d.update(share=1.5), "share"),
        (lambda d: d.pop("pooled"), "not a saved"),
        (lambda d: d["policy"].update(alpha=2.0), "alpha"),
    ],
)
def test_from_json_refuses_what_to_json_did_not_write(change: Any, words: str) -> None:
    test = SequentialTest(0.2)
    for i in range(30):
        test.add("canary" if i % 5 == 0 else "serving", float(i % 3 - 1))
    data = test.to_json()
    change(data)
    with pytest.raises(ValueError, match=words):
        SequentialTest.from_json(data)
