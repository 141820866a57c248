"""The canary's anytime-valid sequential test: does the canary's mean reward beat the serving one's?

Each reply goes to the canary with a known probability `share` (else to the serving variant), and
its reward R, clipped to ±`reward_clip`, enters once. After every entry the test may be looked at,
and it decides at the first entry where a one-sided bound clears 0: **promote** when the lower
(1 − α) bound of Δ = mean(canary) − mean(serving) exceeds 0, **harm** when the upper one falls
below 0. Looking after every entry is the point: a fixed-n test looked at that often promotes a
canary no better than the serving variant far more often than α (tests/core/learning_stats).

How, in three parts:
1. Each entry i becomes an unbiased score of Δ whatever came before, the augmented
   inverse-propensity (AIPW) score with predictable arm means m_c, m_s (the running means before
   entry i), since the share p is known:
       φ_i = (m_c − m_s) + A_i (R_i − m_c) / p − (1 − A_i)(R_i − m_s) / (1 − p),  A_i = 1 for the canary.
   With the means of the past plugged in, its variance approaches the difference in means' own,
   and it does not change when every reward is shifted by a constant (Waudby-Smith et al. 2024).
   An entry is scored once each arm has an earlier reward to predict from; t counts scored entries.
2. The running mean μ̂_t of φ gets an asymptotic confidence sequence, μ̂_t ∓ σ̂_t · u(t) / t, with
   u the one-sided normal-mixture boundary at intrinsic time v = t (Howard et al. 2021): the s
   that solves
       log 2 + ½ log(ρ / (v + ρ)) + s² / (2 (v + ρ)) + log Φ(s / √(v + ρ)) = log(1 / α),
   where the mixture over λ ≥ 0 (half-normal, precision ρ) of exp(λ s − λ² v / 2) crosses 1/α.
   It is the one-sided form of the mixture SPRT of Johari et al. (2022). The spread ρ minimises
   the boundary at the planned number of replies t*: ρ = t* / (2 L + log(1 + 2 L)), L = log(1/(2α)),
   as confseq's `OneSidedNormalMixture::best_rho` does (the two-sided rule at 2α).
3. σ̂_t² plugs estimates into φ's variance, σ_c² / p + σ_s² / (1 − p): each arm's variance by
   Welford's method, but never below the variance of all rewards pooled (nor `variance_floor`).
   The guarantee is asymptotic, so small samples are guarded twice: no bound before each arm has
   `min_per_arm` entries, and that floor, which is the truth when the arms are alike (when a false
   promotion is likeliest). Without it, a canary whose first dozen replies drew no reaction
   (an arm variance of 0) let the plain plug-in of φ's variance promote an alike canary on 1.4 %
   of days at a share of 0.2 and α = 0.01; with it, 0.4 %.

The decision is kept once reached (the first crossing is what the guarantee covers); entries that
arrive later still update the counts and means, for display.

References:
- R. Johari, P. Koomen, L. Pekelis, D. Walsh, "Always Valid Inference: Continuous Monitoring of
  A/B Tests", Operations Research 70(3), 2022.
- I. Waudby-Smith, D. Arbour, R. Sinha, E. H. Kennedy, A. Ramdas, "Time-uniform central limit
  theory and asymptotic confidence sequences", Annals of Statistics, 2024.
- S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon, "Time-uniform, nonparametric, nonasymptotic
  confidence sequences", Annals of Statistics 49(2), 2021; and their confseq library.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt

Arm = Literal["canary", "serving"]
Decision = Literal["promote", "harm"]
ARMS: tuple[Arm, ...] = ("canary", "serving")
STATE_VERSION = 1
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
_BISECTIONS = 80


@dataclass(frozen=True, slots=True)
class SequentialPolicy:
    alpha: float = 0.01  # each one-sided bound fails with at most this chance, over all peeks
    min_per_arm: int = 10
    planned_replies: int = 400  # where the boundary is tightest (the mixture's spread)
    reward_clip: float = 2.0
    variance_floor: float = 0.05  # the least reward variance assumed (module doc, part 3)

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"alpha must be between 0 and 0.5, not {self.alpha}")
        if self.min_per_arm < 2 or self.planned_replies < 1:
            raise ValueError("min_per_arm must be at least 2 and planned_replies at least 1")
        if not (self.reward_clip > 0 and self.variance_floor > 0):
            raise ValueError("reward_clip and variance_floor must be positive")
        if not all(math.isfinite(x) for x in (self.reward_clip, self.variance_floor)):
            raise ValueError("reward_clip and variance_floor must be finite")

    @property
    def spread(self) -> float:
        """ρ: the precision of the half-normal mixture, tuned for `planned_replies` at level α."""
        level = 2 * math.log(1 / (2 * self.alpha))
        return self.planned_replies / (level + math.log(1 + level))


@dataclass(frozen=True, slots=True)
class Bounds:
    """One-sided (1 − α) bounds of Δ = mean(canary) − mean(serving); ±inf until each arm has
    `min_per_arm` entries. `estimate` is the centre of the bounds (the mean AIPW score)."""

    estimate: float
    lower: float
    upper: float
    n_canary: int
    n_serving: int
    mean_canary: float
    mean_serving: float

    def as_json(self) -> dict[str, Any]:
        """JSON has no infinity: an open bound is null."""
        return {key: (value if math.isfinite(value) else None) if isinstance(value, float) else value
                for key, value in asdict(self).items()}  # fmt: skip


def one_sided_boundary(v: float, alpha: float, rho: float) -> float:
    """u(v): the one-sided normal-mixture boundary for a sum with intrinsic time v (module doc)."""
    width = math.sqrt(v + rho)
    target = math.log(1 / alpha) - math.log(2) - 0.5 * math.log(rho / (v + rho))

    def excess(x: float) -> float:  # increasing for x ≥ 0, negative at 0 since target > 0
        return x * x / 2 + math.log(0.5 * math.erfc(-x / math.sqrt(2))) - target

    low, high = 0.0, math.sqrt(2 * target) + 1.0  # log Φ ≤ 0, so x²/2 = target is below the root
    while excess(high) < 0:
        high *= 2
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        low, high = (middle, high) if excess(middle) < 0 else (low, middle)
    return high * width  # the high side: a bound a hair wide, never a hair narrow


def boundaries(t: FloatArray, policy: SequentialPolicy) -> FloatArray:
    """u(t) for an array of whole entry counts ≥ 1, each count solved once."""
    counts, where = np.unique(t, return_inverse=True)
    solved = np.array([one_sided_boundary(float(v), policy.alpha, policy.spread) for v in counts])
    return solved[where.reshape(t.shape)]


def score_variance(share: float, policy: SequentialPolicy, arms: Any, pooled: Any) -> Any:
    """σ̂²: φ's variance from the arms' variances `arms` (canary, serving), each floored (module doc)."""
    floor = np.maximum(pooled, policy.variance_floor)
    return np.maximum(arms[0], floor) / share + np.maximum(arms[1], floor) / (1 - share)


def check_share(share: float) -> float:
    if not (math.isfinite(share) and 0 < share < 1):
        raise ValueError(f"the canary's share must be between 0 and 1, not {share}")
    return float(share)


@dataclass(slots=True)
class Running:
    """Welford's running count, mean and sum of squared deviations."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, x: float) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    @property
    def variance(self) -> float:
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0


class SequentialTest:
    """The test for one canary, fed one reward at a time in O(1); `to_json` is its whole state."""

    def __init__(self, share: float = 0.2, policy: SequentialPolicy | None = None) -> None:
        self.share = check_share(share)
        self.policy = policy or SequentialPolicy()
        self._arms = {arm: Running() for arm in ARMS}
        self._pooled = Running()  # every reward, both arms
        self._scores = Running()  # the AIPW scores φ (only the mean is used)
        self._decision: Decision | None = None
        self._decided_at: int | None = None

    def add(self, arm: Arm, reward: float) -> None:
        """Enter one reply's final reward; the first entry whose bounds clear 0 decides."""
        if arm not in ARMS:
            raise ValueError(f"arm must be 'canary' or 'serving', not {arm!r}")
        if not math.isfinite(reward):
            raise ValueError(f"a reward must be a finite number, not {reward}")
        clip = self.policy.reward_clip
        r = min(max(float(reward), -clip), clip)
        canary, serving, p = self._arms["canary"], self._arms["serving"], self.share
        if canary.n and serving.n:
            m_c, m_s = canary.mean, serving.mean
            self._scores.add(m_c - m_s + ((r - m_c) / p if arm == "canary" else -(r - m_s) / (1 - p)))
        self._arms[arm].add(r)
        self._pooled.add(r)
        if self._decision is None:
            self._decision = decide(self.bounds())
            self._decided_at = self._pooled.n if self._decision else None

    def bounds(self) -> Bounds:
        canary, serving = self._arms["canary"], self._arms["serving"]
        lower, upper = -math.inf, math.inf
        if min(canary.n, serving.n) >= self.policy.min_per_arm:
            t, policy = self._scores.n, self.policy
            arms = (canary.variance, serving.variance)
            variance = float(score_variance(self.share, policy, arms, self._pooled.variance))
            half = math.sqrt(variance) * one_sided_boundary(t, policy.alpha, policy.spread) / t
            lower, upper = self._scores.mean - half, self._scores.mean + half
        return Bounds(
            estimate=self._scores.mean, lower=lower, upper=upper, n_canary=canary.n, n_serving=serving.n,
            mean_canary=canary.mean, mean_serving=serving.mean,
        )  # fmt: skip

    def decision(self) -> Decision | None:
        """The decision reached at the first entry whose bounds cleared 0, or None yet."""
        return self._decision

    @property
    def decided_at(self) -> int | None:
        """How many entries (scored or not) there were when the test decided."""
        return self._decided_at

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "share": self.share,
            "policy": asdict(self.policy),
            **{name: asdict(running) for name, running in self._runnings().items()},
            "decision": self._decision,
            "decided_at": self._decided_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SequentialTest:
        """The test `to_json` saved; raises ValueError, in plain words, on anything else."""
        try:
            return _restore(cls, data)
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"not a saved sequential test: {error!r}") from error

    def _runnings(self) -> dict[str, Running]:
        runnings: dict[str, Running] = {"canary": self._arms["canary"], "serving": self._arms["serving"]}
        return {**runnings, "pooled": self._pooled, "scores": self._scores}


def decide(bounds: Bounds) -> Decision | None:
    if bounds.lower > 0:
        return "promote"
    return "harm" if bounds.upper < 0 else None


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, not {value!r}")
    return float(value)


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a whole number ≥ 0, not {value!r}")
    return value


def _restore(cls: type[SequentialTest], data: dict[str, Any]) -> SequentialTest:
    if data.get("version") != STATE_VERSION:
        raise ValueError(f"unknown sequential test state version {data.get('version')!r}")
    test = cls(_number(data["share"], "share"), SequentialPolicy(**data["policy"]))
    for name, running in test._runnings().items():
        saved = data[name]
        running.n = _count(saved["n"], f"{name} count")
        running.mean, running.m2 = _number(saved["mean"], f"{name} mean"), _number(saved["m2"], f"{name} m2")
        if running.m2 < 0:
            raise ValueError(f"{name} has a negative sum of squares")
    if not test._scores.n <= test._pooled.n == test._arms["canary"].n + test._arms["serving"].n:
        raise ValueError("the saved counts do not add up")
    decision, decided_at = data["decision"], data["decided_at"]
    if decision not in (None, "promote", "harm") or (decision is None) != (decided_at is None):
        raise ValueError(f"bad saved decision {decision!r} at {decided_at!r}")
    test._decision = cast(Decision | None, decision)
    test._decided_at = None if decided_at is None else _count(decided_at, "decided_at")
    return test


@dataclass(frozen=True, slots=True)
class BatchBounds:
    """The bounds of many streams over a block of entries: arrays of shape (streams, entries)."""

    estimate: FloatArray
    lower: FloatArray
    upper: FloatArray


class SequentialBatch:
    """The same test on many independent streams at once, fed block by block, for simulations:
    entry for entry it computes what `SequentialTest` computes, from plain running sums rather
    than Welford's (equal to rounding at these sizes). `decision` is +1 (promote), −1 (harm) or 0
    per stream, `decided_at` the entry count when it was reached (0 for none)."""

    def __init__(self, streams: int, share: float = 0.2, policy: SequentialPolicy | None = None) -> None:
        self.share = check_share(share)
        self.policy = policy or SequentialPolicy()
        self.entries = 0
        # Per stream: the canary's entries, sum and sum of squares, then both arms' sum and sum
        # of squares (the serving arm's are the difference), the scores' sum and count.
        self._sums = np.zeros((7, streams))
        self.decision = np.zeros(streams, dtype=np.int8)
        self.decided_at = np.zeros(streams, dtype=np.int64)

    def add(self, canary: npt.NDArray[np.bool_], rewards: FloatArray) -> BatchBounds:
        """Enter a block: `canary[s, j]` is whether stream s's j-th entry went to the canary."""
        p, policy = self.share, self.policy
        a = canary.astype(np.float64)
        r = np.clip(rewards, -policy.reward_clip, policy.reward_clip)
        entries = self.entries + np.arange(1, r.shape[1] + 1)
        n_c, sum_c, squares_c, total, squares = (
            np.cumsum(x, axis=1) + before[:, None]
            for x, before in zip((a, a * r, a * r * r, r, r * r), self._sums, strict=False)
        )
        # Before each entry, what its score may use: the arms' running means.
        before_c, before_s = n_c - a, entries - 1 - (n_c - a)
        mean_c = (sum_c - a * r) / np.maximum(before_c, 1)
        mean_s = (total - r - (sum_c - a * r)) / np.maximum(before_s, 1)
        scored = (before_c > 0) & (before_s > 0)
        phi = mean_c - mean_s + np.where(canary, (r - mean_c) / p, -(r - mean_s) / (1 - p))
        score_sum = np.cumsum(np.where(scored, phi, 0.0), axis=1) + self._sums[5][:, None]
        t = np.cumsum(scored, axis=1) + self._sums[6][:, None]
        # After each entry, what its bounds use: the arms' variances and the pooled one.
        n_s = entries - n_c
        var_c = (squares_c - sum_c * sum_c / np.maximum(n_c, 1)) / np.maximum(n_c - 1, 1)
        sum_s, squares_s = total - sum_c, squares - squares_c
        var_s = (squares_s - sum_s * sum_s / np.maximum(n_s, 1)) / np.maximum(n_s - 1, 1)
        pooled = (squares - total * total / entries) / np.maximum(entries - 1, 1)
        t_or_1 = np.maximum(t, 1)
        sd = np.sqrt(score_variance(p, policy, (var_c, var_s), pooled))
        half = sd * boundaries(t_or_1, policy) / t_or_1
        estimate = score_sum / t_or_1
        ready = np.minimum(n_c, n_s) >= policy.min_per_arm
        lower = np.where(ready, estimate - half, -np.inf)
        upper = np.where(ready, estimate + half, np.inf)
        self._record(lower > 0, upper < 0, entries)
        self._sums = np.stack([x[:, -1] for x in (n_c, sum_c, squares_c, total, squares, score_sum, t)])
        self.entries = int(entries[-1])
        return BatchBounds(estimate=estimate, lower=lower, upper=upper)

    def _record(self, promote: npt.NDArray[np.bool_], harm: npt.NDArray[np.bool_], entries: IntArray) -> None:
        crossed = promote | harm
        first = crossed.argmax(axis=1)
        rows = np.nonzero((self.decision == 0) & crossed.any(axis=1))[0]
        self.decision[rows] = np.where(promote[rows, first[rows]], 1, -1)
        self.decided_at[rows] = entries[first[rows]]
