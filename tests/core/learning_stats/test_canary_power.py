"""How many replies the canary needs (bot/core/learning/canary_power.py): the simulation's teacher
draws what it says, and the documented numbers of replies give the power they claim on days the
search for them never saw."""

from __future__ import annotations

import numpy as np
import pytest

from bot.core.learning.canary_power import promotion_share, replies_for_power, simulate_days, teacher_rewards
from bot.core.learning.sequential import SequentialPolicy

# replies_for_power(0.25, 0.05, share) at α = 0.01, 80 % power, 2,000 days from seed 0: the numbers
# bench/canary_power.py prints and the docs quote.
REPLIES_FOR_POWER = {0.5: 420, 0.2: 679}


@pytest.mark.parametrize("taste_rate", [0.05, 0.3])
def test_the_teacher_reacts_as_the_simulation_does(taste_rate: float) -> None:
    """+1 when the taste is met, −1 for a quarter of misses, then each reaction flipped one time
    in ten: at 5 %, R = +1 with probability 0.069 and −1 with 0.219; at 30 %, 0.2875 and 0.1875."""
    rewards = teacher_rewards(np.random.default_rng(0), np.full(400_000, taste_rate))
    up = 0.9 * taste_rate + 0.1 * 0.25 * (1 - taste_rate)
    down = 0.9 * 0.25 * (1 - taste_rate) + 0.1 * taste_rate
    assert set(np.unique(rewards)) == {-1.0, 0.0, 1.0}
    assert np.mean(rewards == 1) == pytest.approx(up, abs=0.003)
    assert np.mean(rewards == -1) == pytest.approx(down, abs=0.003)


@pytest.mark.parametrize("share", [0.5, 0.2])
def test_the_documented_replies_give_80_percent_power_on_fresh_days(share: float) -> None:
    """The search reproduces the documented number; on 2,000 other days that many replies promote
    a 25-point lift at least 80 % of the time (within 3 standard errors), and a quarter fewer
    replies do not."""
    replies = REPLIES_FOR_POWER[share]
    assert replies_for_power(0.25, 0.05, share, power=0.8, seeds=2000, seed=0) == replies
    assert promotion_share(0.25, 0.05, share, replies, seeds=2000, seed=7) >= 0.8 - 3 * 0.009
    assert promotion_share(0.25, 0.05, share, int(0.75 * replies), seeds=2000, seed=7) < 0.75


def test_a_quick_day_of_192_replies_has_about_a_third_of_the_power() -> None:
    """The issue's measurement of the old quick canary day, reproduced: 192 replies at share 0.5."""
    assert 0.2 < promotion_share(0.25, 0.05, 0.5, 192, seeds=2000, seed=3) < 0.4


def test_no_lift_needs_more_replies_than_any_day_has() -> None:
    assert replies_for_power(0.0, 0.05, 0.5, seeds=500, max_replies=2000) is None
    assert replies_for_power(0.25, 0.05, 0.5, seeds=500, max_replies=100) is None


def test_a_day_stops_early_once_enough_days_have_promoted_and_the_draws_do_not_depend_on_where() -> None:
    early = simulate_days(0.25, 0.05, 0.5, 5000, seeds=300, seed=5, stop_at_power=0.5)
    assert early.entries < 5000 and np.mean(early.decision == 1) >= 0.5
    full = simulate_days(0.25, 0.05, 0.5, 5000, seeds=300, seed=5)
    decided_early = early.decision != 0
    assert np.array_equal(early.decision[decided_early], full.decision[decided_early])
    assert np.array_equal(early.decided_at[decided_early], full.decided_at[decided_early])


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="taste rates"):
        promotion_share(0.5, 0.7, 0.5, 100)
    with pytest.raises(ValueError, match="power"):
        replies_for_power(0.25, 0.05, 0.5, power=1.0)
    with pytest.raises(ValueError, match="share"):
        replies_for_power(0.25, 0.05, 1.0)
    assert SequentialPolicy().alpha == 0.01  # the power above is at the shipped α
