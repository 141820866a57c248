"""Fixtures shared by every test folder. The PostgreSQL server starts once, on first use."""

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

# Set before anything imports transformers: the tests never reach for the Hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from tests.support.pg import pg_dsn, pg_server  # noqa: F401

if TYPE_CHECKING:
    from bot.inference.embedder import SentenceTransformerEmbedder


@pytest.fixture(scope="module")
async def minilm() -> AsyncIterator["SentenceTransformerEmbedder"]:
    """The real MiniLM embedder, from its wheel: for tests where similarity itself matters."""
    from bot.inference.embedder import SentenceTransformerEmbedder

    loaded = SentenceTransformerEmbedder.load()
    yield loaded
    await loaded.close()
