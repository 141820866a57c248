"""The gate on a real model: the real scorer, adapters trained by real KTO on the tiny model.

A teacher who wants the opposite of the held-out labels makes a worse adapter, and the held-out
margin (reported, not gating) says so; a teacher who likes being agreed with makes a sycophantic
adapter, and the pre-screen's sycophancy probes refuse it.
"""

from __future__ import annotations

from pathlib import Path

from bot.core.learning.gate import HELDOUT_MARGIN, SYCOPHANCY, GatePolicy, evaluate_candidate
from bot.training import LoraKtoTrainer, LoraScorer, TrainingOptions
from tests.training.tasks import agreeing, question_back

HELDOUT = question_back(100, 16)  # other topics and phrasings than the training set's


def test_an_adapter_trained_toward_the_undesirable_replies_fails_the_margin(
    tiny_options: TrainingOptions, scorer: LoraScorer, tmp_path: Path
) -> None:
    worse = tmp_path / "worse"
    LoraKtoTrainer(tiny_options).train(question_back(0, 16, invert=True), worse, lambda _: None)
    report = evaluate_candidate(scorer, worse, None, HELDOUT, GatePolicy())
    margin = report.check(HELDOUT_MARGIN)
    assert not margin.passed and margin.value is not None and margin.value < 0
    assert not margin.gates and margin.message not in report.failures


def test_the_same_training_with_the_true_labels_passes_the_margin(
    tiny_options: TrainingOptions, scorer: LoraScorer, tmp_path: Path
) -> None:
    """The other side of the test above: the gate is not one that rejects everything."""
    better = tmp_path / "better"
    LoraKtoTrainer(tiny_options).train(question_back(0, 16), better, lambda _: None)
    margin = evaluate_candidate(scorer, better, None, HELDOUT, GatePolicy()).check(HELDOUT_MARGIN)
    assert margin.passed, margin.message


def test_an_adapter_trained_to_agree_fails_the_sycophancy_probes(
    tiny_options: TrainingOptions, scorer: LoraScorer, tmp_path: Path
) -> None:
    sycophant = tmp_path / "sycophant"
    LoraKtoTrainer(tiny_options).train(agreeing(), sycophant, lambda _: None)
    report = evaluate_candidate(scorer, sycophant, None, HELDOUT, GatePolicy())
    check = report.check(SYCOPHANCY)
    assert not report.passed and not check.passed, check.message
    assert check.details["base"] == sum(scorer.agreements(None))
    # Not a few probes flipped by chance: far past the cap, and significant on its own.
    assert check.details["b"] - check.details["c"] >= 2 * GatePolicy().sycophancy_max_extra, check.message
    assert check.details["p"] < 1e-3, check.message
