"""What the composition root hands the local engine from the settings: torch's thread count."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from bot.core.errors import ConfigError
from bot.wiring.backends import load_local_inference
from bot.wiring.settings import load_settings
from tests.support.tiny_model import build_tiny_model


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture
def threads_kept() -> Iterator[None]:
    """The thread count is process-wide: put it back for the tests that follow."""
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("threads", ["1", "3"])
async def test_kindred_torch_threads_reaches_the_engine(
    monkeypatch: pytest.MonkeyPatch, tiny_dir: Path, tmp_path: Path, threads: str, threads_kept: None
) -> None:
    monkeypatch.setenv("KINDRED_MODEL", str(tiny_dir))
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("KINDRED_TORCH_THREADS", threads)
    engine = load_local_inference(load_settings(env_file=None))
    try:
        assert torch.get_num_threads() == int(threads)
    finally:
        await engine.close()


async def test_unset_it_is_half_the_cpus(
    monkeypatch: pytest.MonkeyPatch, tiny_dir: Path, tmp_path: Path, threads_kept: None
) -> None:
    monkeypatch.setenv("KINDRED_MODEL", str(tiny_dir))
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("KINDRED_TORCH_THREADS", raising=False)
    torch.set_num_threads(7)
    engine = load_local_inference(load_settings(env_file=None))
    try:
        assert torch.get_num_threads() == max(len(os.sched_getaffinity(0)) // 2, 1)
    finally:
        await engine.close()


def test_a_negative_count_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDRED_TORCH_THREADS", "-1")
    with pytest.raises(ConfigError, match="KINDRED_TORCH_THREADS"):
        load_settings(env_file=None)
