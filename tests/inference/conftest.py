"""Models shared by the inference tests: the real SmolLM2 converted once, and a tiny random model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.inference.model_files import prepare_model
from tests.support.tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("inference-data")


@pytest.fixture(scope="session")
def smollm2_dir(data_dir: Path) -> Path:
    return prepare_model("bundled", data_dir)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory, data_dir: Path, smollm2_dir: Path) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), data_dir)


async def collect(chunks: AsyncIterator[str]) -> list[str]:
    return [chunk async for chunk in chunks]


async def text_of(chunks: AsyncIterator[str]) -> str:
    return "".join(await collect(chunks))


async def wait_until(condition: Callable[[], bool], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.01)
    return condition()
