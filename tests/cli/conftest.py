from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import share_onnx_export
from tests.support.tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def shared_data(tmp_path_factory: pytest.TempPathFactory, onnx_export: Path) -> Path:
    """One data dir per session for the converted SmolLM2, so it is converted once (and MiniLM's
    ONNX export, made once per session)."""
    data = tmp_path_factory.mktemp("kindred-data")
    share_onnx_export(onnx_export, data)
    return data


@pytest.fixture(scope="session")
def tiny_model(shared_data: Path) -> Path:
    return build_tiny_model(shared_data / "tiny-model", data_dir=shared_data)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
async def kindred_env(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, onnx_export: Path
) -> AsyncIterator[str]:
    """Settings for one CLI run: a private data dir and an empty database of each kind."""
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path / "data"))
    share_onnx_export(onnx_export, tmp_path / "data")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    if request.param == "postgres":
        from tests.support.pg import as_url, fresh_database

        dsn = await fresh_database(request.getfixturevalue("pg_server"))
        monkeypatch.setenv("DATABASE_URL", as_url(dsn))
    yield request.param
