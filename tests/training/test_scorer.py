"""The gate's measurements on the tiny model: rewards against the base, the regression set's loss
and KL, and per-probe agreement on the sycophancy probes; adapters are real peft folders."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from bot.training import LoraScorer
from bot.training.evalsets import sycophancy_probes
from bot.training.tokens import tokenize_example
from tests.inference.lora_files import make_adapter
from tests.training.tasks import question_back


def untrained_adapter(tiny_dir: Path, folder: Path) -> Path:
    """An adapter as peft makes it, before any step: lora_B is zero, so it is the base exactly."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(tiny_dir), local_files_only=True)
    get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear")).save_pretrained(
        str(folder)
    )
    return folder


def test_the_base_scores_against_itself(scorer: LoraScorer) -> None:
    assert scorer.implicit_rewards(None, question_back(0, 4)) == [0.0] * 4
    regression = scorer.regression(None)
    assert regression["kl"] == 0.0 and regression["loss"] == regression["base_loss"]
    # A random model spreads its guesses over SmolLM2's 49k tokens: about ln(49152) nats each.
    assert abs(regression["loss"] - math.log(49152)) < 0.5
    assert regression["items"] >= 30
    agreements = scorer.agreements(None)
    assert len(agreements) == len(sycophancy_probes()) and all(isinstance(a, bool) for a in agreements)
    assert scorer.agreements(None) is agreements  # the base's, measured once


def test_an_adapter_that_changes_nothing_scores_as_the_base(
    scorer: LoraScorer, tiny_dir: Path, tmp_path: Path
) -> None:
    adapter = untrained_adapter(tiny_dir, tmp_path / "zero")
    assert scorer.implicit_rewards(adapter, question_back(0, 6)) == pytest.approx([0.0] * 6, abs=1e-3)
    regression = scorer.regression(adapter)
    assert regression["kl"] == pytest.approx(0.0, abs=1e-6)
    assert regression["loss"] == pytest.approx(scorer.regression(None)["loss"], abs=1e-5)
    assert scorer.agreements(adapter) == scorer.agreements(None)


def test_a_strong_adapter_moves_every_measurement(scorer: LoraScorer, tiny_dir: Path, tmp_path: Path) -> None:
    adapter = make_adapter(tiny_dir, tmp_path / "strong", seed=1)
    rewards = scorer.implicit_rewards(adapter, question_back(0, 6))
    assert max(abs(r) for r in rewards) > 0.02  # nats per token; an adapter that changes nothing: < 1e-3
    regression = scorer.regression(adapter)
    assert regression["kl"] > 0.01 and regression["loss"] != regression["base_loss"]


def test_a_folder_trained_again_is_scored_anew(scorer: LoraScorer, tiny_dir: Path, tmp_path: Path) -> None:
    folder = make_adapter(tiny_dir, tmp_path / "candidate", seed=1)
    first = scorer.implicit_rewards(folder, question_back(0, 4))
    shutil.rmtree(folder)
    make_adapter(tiny_dir, folder, seed=2)
    assert scorer.implicit_rewards(folder, question_back(0, 4)) != pytest.approx(first)


def test_padding_in_a_batch_changes_no_row(scorer: LoraScorer, tiny_dir: Path, tmp_path: Path) -> None:
    from bot.training.logprobs import ScoringModel

    adapter = make_adapter(tiny_dir, tmp_path / "strong", seed=3)
    model = ScoringModel(scorer.options)
    rows = [
        tokenize_example(model.tokenizer, e.prompt, e.completion + " more" * i, cut=e.cut, max_length=256)
        for i, e in enumerate(question_back(0, 5))
    ]
    together = model.row_stats(adapter, rows)
    alone = [model.row_stats(adapter, [row])[0] for row in rows]
    for a, b in zip(together, alone, strict=True):
        assert a.tokens == b.tokens
        assert a.logp == pytest.approx(b.logp, abs=1e-3) and a.base_logp == pytest.approx(
            b.base_logp, abs=1e-3
        )
        assert a.kl == pytest.approx(b.kl, abs=1e-3)


def test_an_implicit_reward_is_per_token_of_the_reply(
    scorer: LoraScorer, tiny_dir: Path, tmp_path: Path
) -> None:
    """A summed reward grows with the reply's length; the gate compares replies of 5 to 48 tokens."""
    adapter = make_adapter(tiny_dir, tmp_path / "strong", seed=4)
    examples = question_back(0, 4)
    rows = [scorer._tokens(e.prompt, e.completion, cut=e.cut) for e in examples]
    stats = scorer._model().row_stats(adapter, rows)
    assert all(s.tokens > 1 for s in stats)
    expected = [(s.logp - s.base_logp) / s.tokens for s in stats]
    assert scorer.implicit_rewards(adapter, examples) == pytest.approx(expected)
    assert expected != pytest.approx([s.logp - s.base_logp for s in stats])


def test_agreement_odds_are_above_a_half_exactly_where_it_agrees(scorer: LoraScorer) -> None:
    odds = scorer.agreement_odds(None)
    assert len(odds) == len(sycophancy_probes()) and all(0.0 < p < 1.0 for p in odds)
    assert tuple(p > 0.5 for p in odds) == scorer.agreements(None)
