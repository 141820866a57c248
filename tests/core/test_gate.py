"""The gate's decision, as arithmetic over what a scorer measured.

`FixedScorer` below implements `AdapterScorer`, our own Protocol (bot/core/learning/ports.py), with fixed
numbers: it stands in for no SDK object and no transport, only for the measurements, so the
bootstrap and the bounds can be checked exactly. The gate on a real model, with the real scorer
and real training, is tested in tests/training/test_gate_on_model.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bot.core.learning.gate import (
    CHECKS,
    HELDOUT_MARGIN,
    KL_TO_BASE,
    REGRESSION_LOSS,
    SYCOPHANCY,
    GatePolicy,
    GateReport,
    evaluate_candidate,
)
from bot.core.learning.models import TrainingExample
from bot.core.models import ChatMessage, JSONObject

CANDIDATE = Path("v2")
SERVING = Path("v1")


class FixedScorer:
    """Measurements given in advance, per adapter (None: the base model)."""

    def __init__(
        self,
        rewards: dict[Path, list[float]],
        loss: dict[Path | None, float] | None = None,
        kl: float = 0.01,
        agreement: dict[Path | None, float] | None = None,
    ) -> None:
        self._rewards = rewards
        self._loss = loss or {None: 2.0, CANDIDATE: 2.02, SERVING: 2.01}
        self._kl = kl
        self._agreement = agreement or {None: 0.2, CANDIDATE: 0.2, SERVING: 0.2}

    def implicit_rewards(self, adapter: Path | None, examples: Sequence[TrainingExample]) -> list[float]:
        if adapter is None:
            return [0.0] * len(examples)
        assert len(self._rewards[adapter]) == len(examples)
        return list(self._rewards[adapter])

    def regression(self, adapter: Path | None) -> JSONObject:
        return {"loss": self._loss[adapter], "kl": 0.0 if adapter is None else self._kl}

    def agreement(self, adapter: Path | None) -> float:
        return self._agreement[adapter]


def heldout(labels: Sequence[bool]) -> list[TrainingExample]:
    return [
        TrainingExample(i, (ChatMessage("user", f"message {i}"),), f"reply {i}", desirable)
        for i, desirable in enumerate(labels)
    ]


def clear_gain(n: int = 10, seed: int = 0) -> tuple[list[bool], list[float]]:
    """The candidate rewards desirable replies by ~3 nats and undesirable ones by ~−3."""
    rng = np.random.default_rng(seed)
    labels = [True] * n + [False] * n
    rewards = [float((3.0 if d else -3.0) + rng.normal(0, 1.0)) for d in labels]
    return labels, rewards


def test_a_clear_gain_over_the_base_passes_every_check() -> None:
    labels, rewards = clear_gain()
    report = evaluate_candidate(
        FixedScorer({CANDIDATE: rewards}), CANDIDATE, None, heldout(labels), GatePolicy()
    )
    assert report.passed, report.failures
    assert [c.name for c in report.checks] == list(CHECKS)
    margin = report.check(HELDOUT_MARGIN)
    assert margin.value == pytest.approx(np.mean(rewards[:10]) - np.mean(rewards[10:]))
    low, high = margin.details["interval"]
    assert 0 < low < margin.value < high


def test_the_report_is_json_with_each_check_named() -> None:
    labels, rewards = clear_gain()
    report = evaluate_candidate(
        FixedScorer({CANDIDATE: rewards}), CANDIDATE, None, heldout(labels), GatePolicy()
    )
    data = json.loads(json.dumps(report.as_json()))
    assert data["passed"] is True
    assert set(data["checks"]) == set(CHECKS)
    for check in data["checks"].values():
        assert {"value", "bound", "passed", "message"} <= set(check)


def test_the_margin_is_compared_with_the_serving_adapter_not_the_base() -> None:
    labels, rewards = clear_gain()
    # The serving adapter already separates the labels as well: no gain, no promotion.
    scorer = FixedScorer({CANDIDATE: rewards, SERVING: [r - 0.01 for r in rewards]})
    report = evaluate_candidate(scorer, CANDIDATE, SERVING, heldout(labels), GatePolicy())
    assert not report.check(HELDOUT_MARGIN).passed
    assert report.failures == [report.check(HELDOUT_MARGIN).message]


def test_a_gain_smaller_than_the_minimum_fails() -> None:
    labels, rewards = clear_gain()
    policy = GatePolicy(min_margin_gain=10.0)
    report = evaluate_candidate(FixedScorer({CANDIDATE: rewards}), CANDIDATE, None, heldout(labels), policy)
    assert not report.passed
    assert "does not clear 10" in report.check(HELDOUT_MARGIN).message


def test_a_worse_adapter_fails_the_margin() -> None:
    labels, rewards = clear_gain()
    inverted = [-r for r in rewards]
    report = evaluate_candidate(
        FixedScorer({CANDIDATE: inverted}), CANDIDATE, None, heldout(labels), GatePolicy()
    )
    check = report.check(HELDOUT_MARGIN)
    assert not check.passed and check.value is not None and check.value < 0


def random_teacher_night(seed: int) -> tuple[list[bool], list[float], list[float]]:
    """A night whose labels say nothing: the candidate's rewards move with each reply (heavy
    tails, as an adapter trained on noise moves them) but not with its label."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 41))
    labels = [bool(x) for x in rng.random(n) < 0.5]
    labels[:4], labels[4:8] = [True] * 4, [False] * 4  # enough of each label to be judged
    serving = rng.standard_t(3, size=n) * rng.uniform(0.1, 3.0)
    candidate = serving * rng.uniform(0.0, 1.5) + rng.standard_t(3, size=n) * rng.uniform(0.1, 5.0)
    return labels, [float(x) for x in candidate], [float(x) for x in serving]


@pytest.mark.slow
def test_a_random_teacher_never_passes_over_many_nights() -> None:
    passed = []
    for seed in range(1000):
        labels, candidate, serving = random_teacher_night(seed)
        scorer = FixedScorer({CANDIDATE: candidate, SERVING: serving})
        report = evaluate_candidate(scorer, CANDIDATE, SERVING, heldout(labels), GatePolicy(seed=seed))
        if report.check(HELDOUT_MARGIN).passed:
            passed.append(seed)
    assert passed == []


def test_too_few_heldout_replies_of_a_label_fail_with_a_clear_message() -> None:
    labels = [True] * 10 + [False] * 3
    rewards = [5.0] * 10 + [-5.0] * 3
    report = evaluate_candidate(
        FixedScorer({CANDIDATE: rewards}), CANDIDATE, None, heldout(labels), GatePolicy()
    )
    check = report.check(HELDOUT_MARGIN)
    assert not check.passed and check.value is None
    assert "3 undesirable" in check.message and "at least 4 of each label" in check.message


def test_a_regression_loss_rise_beyond_the_bound_fails() -> None:
    labels, rewards = clear_gain()
    scorer = FixedScorer({CANDIDATE: rewards}, loss={None: 2.0, CANDIDATE: 2.3})
    report = evaluate_candidate(scorer, CANDIDATE, None, heldout(labels), GatePolicy(max_loss_rise=0.1))
    check = report.check(REGRESSION_LOSS)
    assert not check.passed and check.value == pytest.approx(0.3)
    assert report.check(HELDOUT_MARGIN).passed and not report.passed


def test_a_kl_beyond_the_bound_fails() -> None:
    labels, rewards = clear_gain()
    scorer = FixedScorer({CANDIDATE: rewards}, kl=0.5)
    report = evaluate_candidate(scorer, CANDIDATE, None, heldout(labels), GatePolicy(max_kl=0.1))
    assert not report.check(KL_TO_BASE).passed and not report.passed


def test_agreeing_more_often_than_the_serving_adapter_fails() -> None:
    labels, rewards = clear_gain()
    scorer = FixedScorer(
        {CANDIDATE: rewards, SERVING: [0.0] * len(rewards)},
        agreement={CANDIDATE: 8 / 30, SERVING: 6 / 30, None: 6 / 30},
    )
    report = evaluate_candidate(scorer, CANDIDATE, SERVING, heldout(labels), GatePolicy())
    assert not report.check(SYCOPHANCY).passed and not report.passed
    tolerant = evaluate_candidate(
        scorer, CANDIDATE, SERVING, heldout(labels), GatePolicy(sycophancy_tolerance=0.1)
    )
    assert tolerant.check(SYCOPHANCY).passed


def test_one_probe_more_fails_by_default_and_passes_only_with_a_tolerance_of_one_probe() -> None:
    labels, rewards = clear_gain()
    scorer = FixedScorer({CANDIDATE: rewards}, agreement={None: 23 / 30, CANDIDATE: 24 / 30})
    default = evaluate_candidate(scorer, CANDIDATE, None, heldout(labels), GatePolicy())
    assert not default.check(SYCOPHANCY).passed and not default.passed
    one_probe = GatePolicy(sycophancy_tolerance=1 / 30)
    assert evaluate_candidate(scorer, CANDIDATE, None, heldout(labels), one_probe).check(SYCOPHANCY).passed


def test_the_tolerance_does_not_add_up_over_nights() -> None:
    """A serving adapter one probe above the base: the next may not go one more above it."""
    labels, rewards = clear_gain()
    scorer = FixedScorer(
        {CANDIDATE: rewards, SERVING: [0.0] * len(rewards)},
        agreement={None: 6 / 30, SERVING: 7 / 30, CANDIDATE: 8 / 30},
    )
    one_probe = GatePolicy(sycophancy_tolerance=1 / 30)
    check = evaluate_candidate(scorer, CANDIDATE, SERVING, heldout(labels), one_probe).check(SYCOPHANCY)
    assert not check.passed and check.bound == pytest.approx(7 / 30, abs=1e-9)


def test_agreeing_as_often_as_the_base_passes() -> None:
    labels, rewards = clear_gain()
    scorer = FixedScorer({CANDIDATE: rewards}, agreement={None: 0.1 + 0.2, CANDIDATE: 0.3})
    report = evaluate_candidate(scorer, CANDIDATE, None, heldout(labels), GatePolicy())
    assert report.check(SYCOPHANCY).passed


def test_a_rerun_decides_alike() -> None:
    labels, rewards = clear_gain(n=5, seed=3)
    runs = [
        evaluate_candidate(
            FixedScorer({CANDIDATE: rewards}), CANDIDATE, None, heldout(labels), GatePolicy()
        ).as_json()
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_an_empty_report_does_not_pass() -> None:
    assert not GateReport(()).passed
