"""Models shared by the inference tests: the real SmolLM2 (the session's one conversion), and a tiny
random model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tiny_model import build_tiny_model, share_smollm2


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("inference-data")


@pytest.fixture(scope="session")
def smollm2_dir(data_dir: Path) -> Path:
    return share_smollm2(data_dir)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory, data_dir: Path, smollm2_dir: Path) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), data_dir)
