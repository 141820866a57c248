"""A reward model trained on reactions: does this person like this reply, given what they said?

Features come from the configured embedder only, the same for every taste: the reply's vector r
and its product with the context's vector c (the embedding of the person's message), [r, c ⊙ r].
No feature is written for a taste (no "?" flag, no word count): the model learns whatever the
reactions teach, or nothing.

The model is L2-regularised logistic regression in numpy: features standardised on the training
examples, the bias unpenalised, the penalty (l2 / 2)·‖w‖² on the summed log-loss, solved by
Newton's method (a strictly convex problem: the same examples give the same weights, with no
randomness at all). Each Newton system is solved in whichever of the feature or example space is
smaller (the Woodbury identity): 150 rated replies of 384-d vectors, cross-fitted and fit, take
0.16 s on one core. Run it on one BLAS thread (threadpoolctl, as the SQLite store's products do):
on a busy 2-core machine OpenBLAS's second thread made the same run 20 times slower.

It serves only when it has shown it ranks better than chance on replies it was not trained on:
k-fold cross-fitting (folds split by label, from a seeded permutation) scores every example by a
model trained on the other folds, and the pooled held-out AUC gets a 95 % interval by DeLong's
method (E. R. DeLong, D. M. DeLong, D. L. Clarke-Pearson, "Comparing the areas under two or more
correlated receiver operating characteristic curves: a nonparametric approach", Biometrics 44(3),
1988), computed with the midrank algorithm of X. Sun and W. Xu, "Fast implementation of DeLong's
algorithm for comparing the areas under correlated receiver operating characteristic curves",
IEEE Signal Processing Letters 21(11), 2014. It is usable when the interval's lower end exceeds
`min_auc_low`, with at least `min_per_label` examples of each label; only then is the final model
fit, on all examples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FORMAT = 1
Z_95 = 1.959963984540054  # the standard normal's 97.5th percentile
NEWTON_STEPS = 50
GRADIENT_TOLERANCE = 1e-8  # per example, on the gradient's largest entry
Matrix = npt.NDArray[np.float64]
# An embedding as the embedders give it (a float32 array) or as JSON reads it (a list of floats).
VectorLike = Sequence[float] | npt.NDArray[np.floating[Any]]


@dataclass(frozen=True, slots=True)
class LabeledReply:
    context: VectorLike  # the embedding of the person's message
    reply: VectorLike  # the embedding of the reply
    liked: bool


@dataclass(frozen=True, slots=True)
class RewardModelPolicy:
    folds: int = 5
    l2: float = 1.0
    min_auc_low: float = 0.55
    min_per_label: int = 20
    seed: int = 0  # the fold split's, the only randomness

    def __post_init__(self) -> None:
        if self.folds < 2 or self.min_per_label < self.folds:
            raise ValueError("folds must be at least 2, and min_per_label at least the folds")
        if not (math.isfinite(self.l2) and self.l2 > 0):
            raise ValueError(f"l2 must be a positive number, not {self.l2}")
        if not 0 <= self.min_auc_low < 1:
            raise ValueError(f"min_auc_low must be in [0, 1), not {self.min_auc_low}")


def features(contexts: Matrix, replies: Matrix) -> Matrix:
    """[reply, context ⊙ reply] per row."""
    return np.concatenate([replies, contexts * replies], axis=1)


@dataclass(frozen=True, slots=True)
class RewardModel:
    """Scores are log-odds that the person likes the reply: higher is better."""

    embedder: str
    dim: int  # of the embedder's vectors; the features are twice as many
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    def __post_init__(self) -> None:
        if not (isinstance(self.embedder, str) and self.embedder):
            raise ValueError("a reward model names the embedder its features come from")
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or self.dim < 1:
            raise ValueError(f"dim must be a positive whole number, not {self.dim!r}")
        needed = 2 * self.dim
        for name in ("mean", "scale", "weights"):
            values = getattr(self, name)
            if len(values) != needed:
                raise ValueError(f"{name} has {len(values)} numbers; a {self.dim}-d embedder needs {needed}")
            if not all(_finite(v) for v in values):
                raise ValueError(f"{name} holds something that is not a finite number")
        if min(self.scale) <= 0:
            raise ValueError("every scale must be positive")
        if not _finite(self.bias):
            raise ValueError(f"bias must be a finite number, not {self.bias!r}")

    def score(self, context: VectorLike, reply: VectorLike) -> float:
        return self.score_many([context], [reply])[0]

    def score_many(self, contexts: Sequence[VectorLike], replies: Sequence[VectorLike]) -> list[float]:
        c, r = self._matrix(contexts, "context"), self._matrix(replies, "reply")
        if len(c) != len(r):
            raise ValueError(f"{len(c)} contexts for {len(r)} replies")
        x = (features(c, r) - np.asarray(self.mean)) / np.asarray(self.scale)
        return [float(s) for s in x @ np.asarray(self.weights) + self.bias]

    def as_json(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RewardModel:
        """The model `as_json` wrote; raises ValueError, in plain words, on anything else."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not a saved reward model (format 1)")
        try:
            lists = {name: tuple(data[name]) for name in ("mean", "scale", "weights")}
            return cls(embedder=data["embedder"], dim=data["dim"], bias=data["bias"], **lists)
        except (KeyError, TypeError) as error:
            raise ValueError(f"not a saved reward model: {error!r}") from error

    def _matrix(self, vectors: Sequence[VectorLike], what: str) -> Matrix:
        matrix = np.asarray(vectors, dtype=np.float64).reshape(len(vectors), -1)
        if matrix.shape[1] != self.dim or not np.isfinite(matrix).all():
            raise ValueError(f"each {what} must be {self.dim} finite numbers, as {self.embedder} makes them")
        return matrix


@dataclass(frozen=True, slots=True)
class RewardModelReport:
    model: RewardModel | None  # fit on every example, only when usable
    auc: float | None  # held out, pooled over the folds; None with too few examples to measure
    auc_low: float | None  # its 95 % interval (DeLong)
    auc_high: float | None
    usable: bool
    message: str
    liked: int
    disliked: int

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model.as_json() if self.model else None, "auc": self.auc, "auc_low": self.auc_low,
            "auc_high": self.auc_high, "usable": self.usable, "message": self.message, "liked": self.liked,
            "disliked": self.disliked,
        }  # fmt: skip


def train_reward_model(
    examples: Sequence[LabeledReply], embedder: str, policy: RewardModelPolicy | None = None
) -> RewardModelReport:
    """Measure a reward model's held-out AUC on `examples`, and fit it when that clears the bar."""
    policy = policy or RewardModelPolicy()
    contexts, replies, labels = _arrays(examples)
    liked, disliked = int(labels.sum()), int((~labels).sum())
    if min(liked, disliked) < policy.min_per_label:
        message = (
            f"not used: too few rated replies to measure it ({liked} liked, {disliked} disliked; "
            f"at least {policy.min_per_label} of each are needed)"
        )
        return RewardModelReport(None, None, None, None, False, message, liked, disliked)
    x = features(contexts, replies)
    held_out = np.empty(len(labels))
    folds = fold_split(labels, policy.folds, policy.seed)
    for fold in range(policy.folds):
        train = folds != fold
        mean, scale, weights, bias = fit_logistic(x[train], labels[train], policy.l2)
        held_out[~train] = ((x[~train] - mean) / scale) @ weights + bias
    auc, variance = delong_auc(held_out, labels)
    low, high = max(auc - Z_95 * math.sqrt(variance), 0.0), min(auc + Z_95 * math.sqrt(variance), 1.0)
    usable = low > policy.min_auc_low
    measured = (
        f"held-out AUC {auc:.3f} (95 % interval {low:.3f}–{high:.3f}) over {liked} liked and "
        f"{disliked} disliked replies"
    )
    if usable:
        message = f"usable: {measured}; the interval's lower end clears {policy.min_auc_low}"
    else:
        message = (
            f"not used: {measured} cannot be told from chance at the bar set: the interval's lower end "
            f"does not clear {policy.min_auc_low}"
        )
    model = None
    if usable:
        mean, scale, weights, bias = fit_logistic(x, labels, policy.l2)
        model = RewardModel(
            embedder=embedder, dim=contexts.shape[1], mean=_floats(mean), scale=_floats(scale),
            weights=_floats(weights), bias=float(bias),
        )  # fmt: skip
    return RewardModelReport(model, auc, low, high, usable, message, liked, disliked)


def choose_best(model: RewardModel, context: VectorLike, candidates: Sequence[VectorLike]) -> int:
    """The index of the candidate reply that scores best for this context (the first of a tie)."""
    if not candidates:
        raise ValueError("there are no candidates to choose from")
    return int(np.argmax(model.score_many([context] * len(candidates), candidates)))


def fold_split(labels: npt.NDArray[np.bool_], folds: int, seed: int) -> npt.NDArray[np.int64]:
    """Each example's fold: each label's examples shuffled by `seed` and dealt round the folds."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(labels), dtype=np.int64)
    for label in (True, False):
        members = rng.permutation(np.flatnonzero(labels == label))
        fold[members] = np.arange(len(members)) % folds
    return fold


def fit_logistic(x: Matrix, labels: npt.NDArray[np.bool_], l2: float) -> tuple[Matrix, Matrix, Matrix, float]:
    """(mean, scale, weights, bias) minimising the summed log-loss + (l2 / 2)·‖weights‖² over the
    standardised features (x − mean) / scale, by Newton's method with step halving."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    z = (x - mean) / scale
    y = labels.astype(np.float64)
    weights, bias = np.zeros(z.shape[1]), 0.0
    loss = _objective(z, y, weights, bias, l2)
    for _ in range(NEWTON_STEPS):
        p = _sigmoid(z @ weights + bias)
        grad_w, grad_b = z.T @ (p - y) + l2 * weights, float(np.sum(p - y))
        if max(np.abs(grad_w).max(), abs(grad_b)) < GRADIENT_TOLERANCE * len(y):
            break
        step_w, step_b = _newton_step(z, p * (1 - p), grad_w, grad_b, l2)
        for size in 0.5 ** np.arange(30):  # halve the step until the objective does not rise
            trial = _objective(z, y, weights - size * step_w, bias - size * step_b, l2)
            if trial <= loss:
                weights, bias, loss = weights - size * step_w, bias - size * step_b, trial
                break
        else:
            break  # no step helps: the optimum, to rounding
    return mean, scale, weights, bias


def _newton_step(z: Matrix, s: Matrix, grad_w: Matrix, grad_b: float, l2: float) -> tuple[Matrix, float]:
    """Solve the Newton system H [dw; db] = [grad_w; grad_b], H the Hessian with the bias.

    Eliminating db leaves (ZᵀZ + l2·I) dw = grad_w − c·grad_b / Σs, Z = √s (z − z̄_s), with z̄_s the
    s-weighted mean of the rows and c = zᵀs; solved directly in feature space, or with the
    Woodbury identity in example space when there are fewer examples than features."""
    total = float(s.sum()) + 1e-12
    centre = (s @ z) / total
    right = grad_w - centre * grad_b
    root = np.sqrt(s)[:, None] * (z - centre)
    n, d = root.shape
    if n >= d:
        step_w = np.linalg.solve(root.T @ root + l2 * np.eye(d), right)
    else:
        inner = np.linalg.solve(root @ root.T + l2 * np.eye(n), root @ right)
        step_w = (right - root.T @ inner) / l2
    step_b = (grad_b - float(s @ z @ step_w)) / total
    return np.asarray(step_w, dtype=np.float64), step_b


def _sigmoid(t: Matrix) -> Matrix:
    result: Matrix = 0.5 * (1 + np.tanh(0.5 * t))  # no overflow for large |t|
    return result


def _objective(z: Matrix, y: Matrix, weights: Matrix, bias: float, l2: float) -> float:
    t = z @ weights + bias
    log_loss = np.logaddexp(0.0, t) - y * t
    return float(log_loss.sum() + 0.5 * l2 * weights @ weights)


def midranks(values: Matrix) -> Matrix:
    """1-based ranks, ties given the mean of the ranks they span."""
    _, where, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks: Matrix = (ends - (counts - 1) / 2.0)[where.reshape(values.shape)]
    return ranks


def delong_auc(scores: Matrix, labels: npt.NDArray[np.bool_]) -> tuple[float, float]:
    """(AUC, its variance) by DeLong's method, with Sun and Xu's midranks: a tie counts one half."""
    positive, negative = scores[labels], scores[~labels]
    m, n = len(positive), len(negative)
    if m < 2 or n < 2:
        raise ValueError("DeLong's variance needs at least two examples of each label")
    together = midranks(np.concatenate([positive, negative]))
    auc = float((together[:m].sum() - m * (m + 1) / 2) / (m * n))
    # Structural components: the share of the other label each example outranks.
    v10 = (together[:m] - midranks(positive)) / n
    v01 = 1 - (together[m:] - midranks(negative)) / m
    return auc, float(v10.var(ddof=1) / m + v01.var(ddof=1) / n)


def _arrays(examples: Sequence[LabeledReply]) -> tuple[Matrix, Matrix, npt.NDArray[np.bool_]]:
    if not examples:
        raise ValueError("there are no rated replies to train on")
    dims = {len(e.context) for e in examples} | {len(e.reply) for e in examples}
    if len(dims) != 1:
        raise ValueError(f"the vectors have different lengths {sorted(dims)}: one embedder makes them all")
    contexts = np.asarray([e.context for e in examples], dtype=np.float64)
    replies = np.asarray([e.reply for e in examples], dtype=np.float64)
    if not (np.isfinite(contexts).all() and np.isfinite(replies).all()):
        raise ValueError("a vector holds something that is not a finite number")
    return contexts, replies, np.asarray([bool(e.liked) for e in examples])


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _floats(values: Matrix) -> tuple[float, ...]:
    return tuple(float(v) for v in values)
