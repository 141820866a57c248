"""Models for the training tests: a tiny random Llama with SmolLM2's tokenizer, built once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.training.options import TrainingOptions
from bot.training.scorer import LoraScorer
from tests.support.tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # SmolLM2 is converted once next to it (its tokenizer), in the same temporary folder.
    data_dir = tmp_path_factory.mktemp("training-data")
    return build_tiny_model(data_dir / "tiny", data_dir)


@pytest.fixture(scope="session")
def tiny_options(tiny_dir: Path) -> TrainingOptions:
    """Fast on a random 2-layer model: a high rate moves it within ten steps of eight."""
    return TrainingOptions(str(tiny_dir), learning_rate=5e-3, max_steps=10, batch_size=8, device="cpu")


@pytest.fixture(scope="session")
def scorer(tiny_options: TrainingOptions) -> LoraScorer:
    """One scorer for the scorer and gate tests: the base model loads, and its regression loss and
    agreement are measured, once. Adapters are told apart by folder, so none leaks into another test."""
    return LoraScorer(tiny_options)
