"""KINDRED_TRAIN_THREADS reaches the trainer, which trains on that many torch threads and gives
the process its own count back afterwards (a worker that shares the machine with the bot trains
on one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.training.kto import cpu_threads
from bot.wiring.settings import Settings
from bot.wiring.training_jobs import training_options
from tests.support.tiny_model import build_tiny_model


@pytest.mark.parametrize(("configured", "expected"), [(1, 1), (0, None)])
def test_the_setting_reaches_the_trainers_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configured: int, expected: int | None
) -> None:
    monkeypatch.setenv("KINDRED_TRAIN_THREADS", str(configured))
    tiny = build_tiny_model(tmp_path / "tiny")
    settings = Settings(_env_file=None, data_dir=tmp_path, inference={"model": str(tiny)})  # type: ignore[call-arg]
    assert training_options(settings).threads == expected


def test_training_runs_on_the_threads_asked_and_gives_them_back() -> None:
    import torch

    before = torch.get_num_threads()
    with cpu_threads(1) as used:
        assert used == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
