"""The reward model (bot/core/learning/reward_model.py) on synthetic embeddings: it learns a taste
that the vectors carry, stays unused at chance, refuses to judge from too few ratings, is the same
on every run, and survives JSON; DeLong's interval is checked against its definition."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from bot.core.learning.reward_model import (
    LabeledReply,
    RewardModel,
    RewardModelPolicy,
    choose_best,
    delong_auc,
    fit_logistic,
    train_reward_model,
)

Matrix = np.ndarray[Any, np.dtype[np.float64]]


@pytest.fixture
def one_blas_thread() -> Any:
    """How the model should be trained (the module's docstring): on a busy 2-core machine,
    OpenBLAS's second thread made the 384-d fit below 20 times slower (3 s against 0.16 s)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> Matrix:
    rows = rng.normal(size=(n, dim))
    unit: Matrix = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def taste_examples(seed: int, n: int, dim: int, pull: float = 0.0) -> list[LabeledReply]:
    """Replies liked when they lean along one hidden direction (a taste the vectors carry), with a
    tenth of the labels flipped; `pull` moves each reply towards its side of that direction, as a
    real embedder separates, say, questions from statements."""
    rng = np.random.default_rng(seed)
    taste = unit_rows(rng, 1, dim)[0]
    contexts, replies = unit_rows(rng, n, dim), unit_rows(rng, n, dim)
    side = np.sign(replies @ taste)
    replies = replies + pull * side[:, None] * taste
    replies /= np.linalg.norm(replies, axis=1, keepdims=True)
    liked = (side > 0) ^ (rng.random(n) < 0.1)
    return labeled(contexts, replies, liked)


def random_examples(seed: int, n: int, dim: int) -> list[LabeledReply]:
    rng = np.random.default_rng(seed)
    contexts, replies = unit_rows(rng, n, dim), unit_rows(rng, n, dim)
    return labeled(contexts, replies, rng.random(n) < 0.5)


def labeled(contexts: Matrix, replies: Matrix, liked: Any) -> list[LabeledReply]:
    rows = zip(contexts, replies, liked, strict=True)
    return [LabeledReply(tuple(c), tuple(r), bool(y)) for c, r, y in rows]


def test_a_taste_the_vectors_carry_is_learned_and_used() -> None:
    report = train_reward_model(taste_examples(1, 200, 16), "test-embedder")
    assert report.usable and report.model is not None
    assert report.auc is not None and report.auc_low is not None and report.auc_high is not None
    assert 0.55 < report.auc_low < report.auc < report.auc_high <= 1.0
    assert report.auc > 0.85  # 10 % of labels are flipped: about 0.9 is the ceiling
    assert report.message.startswith("usable") and f"{report.auc:.3f}" in report.message
    assert (report.liked + report.disliked, report.model.dim, len(report.model.weights)) == (200, 16, 32)


@pytest.mark.usefixtures("one_blas_thread")
def test_a_taste_in_384_dimensions_with_fewer_ratings_than_features() -> None:
    """MiniLM's size, 150 ratings against 768 features: the Newton systems are solved in example
    space (the Woodbury identity) during cross-fitting."""
    report = train_reward_model(taste_examples(2, 150, 384, pull=0.5), "minilm")
    assert report.usable and report.auc is not None and report.auc > 0.8


@pytest.mark.usefixtures("one_blas_thread")
@pytest.mark.parametrize("examples", [120, 900])
def test_the_fit_is_the_optimum_whichever_space_it_is_solved_in(examples: int) -> None:
    """At the returned weights the penalised objective's gradient vanishes: fewer examples than
    features (120 against 600) take the example-space solve, more (900) the feature-space one."""
    rng = np.random.default_rng(examples)
    x = rng.normal(size=(examples, 600))
    labels = (x[:, 0] + rng.normal(size=examples)) > 0
    mean, scale, weights, bias = fit_logistic(x, labels, l2=1.0)
    z = (x - mean) / scale
    p = 1 / (1 + np.exp(-(z @ weights + bias)))
    y = labels.astype(np.float64)
    assert np.abs(z.T @ (p - y) + weights).max() < 1e-6 * examples
    assert abs(float(np.sum(p - y))) < 1e-6 * examples


def test_random_labels_are_not_used_and_the_message_says_chance() -> None:
    """At chance, the interval's lower end clears 0.55 on at most 1 of 20 seeds (measured: none)."""
    reports = [train_reward_model(random_examples(100 + seed, 200, 16), "e") for seed in range(20)]
    cleared = [r for r in reports if r.auc_low is not None and r.auc_low > 0.55]
    assert len(cleared) <= 1
    unused = [r for r in reports if not r.usable]
    assert len(unused) >= 19
    for report in unused:
        assert report.model is None and "chance" in report.message and report.message.startswith("not used")
        assert report.auc is not None and 0.3 < report.auc < 0.7


def test_too_few_ratings_of_a_label_are_not_judged() -> None:
    examples = taste_examples(3, 200, 16)
    liked = [e for e in examples if e.liked]
    few = [e for e in examples if not e.liked][:19] + liked
    report = train_reward_model(few, "e")
    assert not report.usable and report.model is None and report.auc is None
    assert (report.liked, report.disliked) == (len(liked), 19)
    assert "too few" in report.message and "19 disliked" in report.message
    assert json.loads(json.dumps(report.as_json()))["auc"] is None


def test_the_same_examples_give_identical_weights() -> None:
    examples = taste_examples(4, 160, 24)
    first, second = train_reward_model(examples, "e"), train_reward_model(examples, "e")
    assert first.model is not None and first.model == second.model
    assert (first.auc, first.auc_low) == (second.auc, second.auc_low)
    other_split = train_reward_model(examples, "e", RewardModelPolicy(seed=1))
    assert other_split.model == first.model  # the final fit uses every example, whatever the folds
    assert other_split.auc != first.auc  # the held-out scores do depend on the split


def test_the_model_survives_json_and_scores_the_same() -> None:
    examples = taste_examples(5, 200, 16)
    model = train_reward_model(examples, "minilm").model
    assert model is not None
    again = RewardModel.from_json(json.loads(json.dumps(model.as_json())))
    assert again == model
    context, reply = examples[0].context, examples[0].reply
    assert again.score(context, reply) == model.score(context, reply)
    scores = model.score_many([e.context for e in examples], [e.reply for e in examples])
    liked = [s for s, e in zip(scores, examples, strict=True) if e.liked]
    disliked = [s for s, e in zip(scores, examples, strict=True) if not e.liked]
    assert np.mean(liked) > np.mean(disliked)


def _bad(change: Any) -> dict[str, Any]:
    model = RewardModel(embedder="e", dim=2, mean=(0.0,) * 4, scale=(1.0,) * 4, weights=(0.5,) * 4, bias=0.0)
    data = model.as_json()
    change(data)
    return data


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (_bad(lambda d: d.update(format=2)), "format"),
        (_bad(lambda d: d.update(weights=[0.5] * 3)), "weights has 3 numbers"),
        (_bad(lambda d: d.update(mean=[0.0, math.nan, 0.0, 0.0])), "mean holds"),
        (_bad(lambda d: d.update(scale=[1.0, 0.0, 1.0, 1.0])), "positive"),
        (_bad(lambda d: d.update(weights=["1", 0.0, 0.0, 0.0])), "weights holds"),
        (_bad(lambda d: d.update(bias=math.inf)), "bias"),
        (_bad(lambda d: d.update(dim=0)), "dim"),
        (_bad(lambda d: d.update(embedder="")), "embedder"),
        (_bad(lambda d: d.pop("bias")), "not a saved"),
        (_bad(lambda d: d.update(scale=None)), "not a saved"),
        ("weights", "not a saved"),
    ],
)
def test_from_json_refuses_bad_data_in_plain_words(data: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        RewardModel.from_json(data)


def test_choose_best_takes_the_highest_score_and_the_first_of_a_tie() -> None:
    # score = reply[0] + (context ⊙ reply)[1], standardised with mean 0 and scale 1
    model = RewardModel(
        embedder="e", dim=2, mean=(0.0,) * 4, scale=(1.0,) * 4, weights=(1.0, 0.0, 0.0, 1.0), bias=0.0
    )
    context = [0.0, 2.0]
    assert model.score(context, [1.0, 1.0]) == 3.0
    assert choose_best(model, context, [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]]) == 1
    assert choose_best(model, context, [[0.0, 1.0], [2.0, 0.0], [1.0, 0.5]]) == 0  # all score 2
    with pytest.raises(ValueError, match="no candidates"):
        choose_best(model, context, [])
    with pytest.raises(ValueError, match="2 finite numbers"):
        choose_best(model, context, [[1.0, 2.0, 3.0]])


def test_delong_matches_its_definition_with_ties() -> None:
    """Sun and Xu's midranks give DeLong's structural components: checked against the O(m·n)
    definition (ψ = 1 above, ½ tied), on scores with many ties."""
    rng = np.random.default_rng(6)
    scores = rng.integers(0, 6, size=70).astype(np.float64)
    labels = rng.random(70) < 0.4
    auc, variance = delong_auc(scores, labels)
    positive, negative = scores[labels], scores[~labels]
    psi = (positive[:, None] > negative[None, :]) + 0.5 * (positive[:, None] == negative[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    assert auc == pytest.approx(psi.mean(), abs=1e-12)
    expected = v10.var(ddof=1) / len(positive) + v01.var(ddof=1) / len(negative)
    assert variance == pytest.approx(expected, abs=1e-12)
    tied = delong_auc(np.array([0.9, 0.8, 0.5, 0.5, 0.3]), np.array([True, True, True, False, False]))
    assert tied[0] == 5.5 / 6  # 0.9 and 0.8 above both, 0.5 above 0.3 and tied with 0.5


def test_bad_examples_and_settings_are_refused() -> None:
    good = taste_examples(7, 60, 8)
    with pytest.raises(ValueError, match="different lengths"):
        train_reward_model([*good, LabeledReply((0.0,) * 9, (0.0,) * 9, True)], "e")
    with pytest.raises(ValueError, match="finite"):
        train_reward_model([*good, replace(good[0], reply=(math.nan,) * 8)], "e")
    with pytest.raises(ValueError, match="no rated replies"):
        train_reward_model([], "e")
    with pytest.raises(ValueError, match="folds"):
        RewardModelPolicy(folds=5, min_per_label=4)
    with pytest.raises(ValueError, match="l2"):
        RewardModelPolicy(l2=0.0)
