"""How many replies the canary's sequential test needs, by simulation with the simulation's teacher.

The teacher (bench/learning_sim.py's): a reply meets the person's taste with probability q; one
that meets it gets 👍 (+1), one that misses gets 👎 (−1) with probability 0.25 and no reaction (0)
otherwise; then each reaction given is flipped with probability 0.1 (the noise). A canary with a
lift of L serves replies that meet the taste at q + L against the serving variant's q.

Power is the share of simulated days (seeds) on which the test promotes the canary by the n-th
reply, peeking after every reply as it does live. Pure numpy; seeded, so the numbers repeat.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from bot.core.learning.sequential import FloatArray, SequentialBatch, SequentialPolicy

MISS_FROWN = 0.25  # a reply that misses the taste gets 👎 this often, else no reaction
FLIP = 0.1  # each reaction given is flipped this often
BLOCK = 200  # replies simulated at a time; the draws of a block never depend on where a run stops


def teacher_rewards(rng: np.random.Generator, taste_rate: FloatArray) -> FloatArray:
    """One reward per reply, −1, 0 or +1, for replies that meet the taste with `taste_rate`."""
    met, frown, flip = (rng.random(taste_rate.shape) for _ in range(3))
    reaction = np.where(met < taste_rate, 1.0, np.where(frown < MISS_FROWN, -1.0, 0.0))
    return np.where(flip < FLIP, -reaction, reaction)


def simulate_days(
    lift: float, base_rate: float, share: float, replies: int, *, policy: SequentialPolicy | None = None,
    seeds: int = 2000, seed: int = 0, stop_at_power: float | None = None,
) -> SequentialBatch:  # fmt: skip
    """`seeds` canary days of up to `replies` replies each, every one entering the test as it comes;
    with `stop_at_power`, the days end early once that share of them has promoted."""
    if not (0 <= base_rate <= 1 and 0 <= base_rate + lift <= 1):
        raise ValueError(f"taste rates must lie in [0, 1]: base {base_rate}, lift {lift}")
    rng = np.random.default_rng(seed)
    batch = SequentialBatch(seeds, share, policy)
    while batch.entries < replies:
        canary: npt.NDArray[np.bool_] = rng.random((seeds, BLOCK)) < share
        rewards = teacher_rewards(rng, np.where(canary, base_rate + lift, base_rate))
        width = min(BLOCK, replies - batch.entries)
        batch.add(canary[:, :width], rewards[:, :width])
        if stop_at_power is not None and np.mean(batch.decision == 1) >= stop_at_power:
            break
    return batch


def promotion_share(
    lift: float, base_rate: float, share: float, replies: int, *, policy: SequentialPolicy | None = None,
    seeds: int = 2000, seed: int = 0,
) -> float:  # fmt: skip
    """The share of simulated days on which the canary is promoted within `replies` replies."""
    batch = simulate_days(lift, base_rate, share, replies, policy=policy, seeds=seeds, seed=seed)
    return float(np.mean(batch.decision == 1))


def replies_for_power(
    lift: float, base_rate: float, share: float, power: float = 0.8, policy: SequentialPolicy | None = None,
    seeds: int = 2000, *, seed: int = 0, max_replies: int = 20_000,
) -> int | None:  # fmt: skip
    """The fewest replies in a day (both arms together) after which the test has promoted a canary
    with this lift in at least `power` of `seeds` simulated days; None if `max_replies` is not enough."""
    if not 0 < power < 1:
        raise ValueError(f"power must be between 0 and 1, not {power}")
    batch = simulate_days(
        lift, base_rate, share, max_replies, policy=policy, seeds=seeds, seed=seed, stop_at_power=power
    )
    promoted_at = np.sort(batch.decided_at[batch.decision == 1])
    needed = math.ceil(power * seeds - 1e-9)  # days that must have promoted
    return int(promoted_at[needed - 1]) if len(promoted_at) >= needed else None
