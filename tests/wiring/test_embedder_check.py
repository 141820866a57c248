"""Memories embedded by one model are never compared with another's. Every memory records its
embedder (model and vector), the store says which embedded its newest memory, and Kindred refuses
to start with another model or another size, saying what to do: on both stores."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bot.core.chat.ports import Inference
from bot.core.errors import ConfigError
from bot.core.memory.ports import Embedder
from bot.core.models import NewMemory, Vector
from bot.core.store import Store
from bot.wiring.backends import check_embedder, open_store
from bot.wiring.kindred import build
from bot.wiring.settings import GeneralSettings, InferenceSettings, Settings, StoreSettings
from tests.support.fakes import HashEmbedder, ScriptedInference

HASH = HashEmbedder()


class Renamed(HashEmbedder):
    """The hash vectors under another model's name, or of a larger size."""

    def __init__(self, model_name: str = "other/model", dim: int = HashEmbedder.dim) -> None:
        super().__init__()
        self.model_name = model_name
        self.dim = dim

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        # Zero-padded to `dim` (at least the hash's 384): as long a vector, still of unit length.
        return [np.pad(vector, (0, self.dim - len(vector))) for vector in await super().embed(texts)]


async def remember(store: Store, text: str, embedder: Embedder = HASH) -> None:
    (vector,) = await embedder.embed([text])
    at = datetime(2026, 12, 1, tzinfo=UTC)
    await store.memories.add_memories([NewMemory("ann", text, "user", at, vector, embedder.model_name)])


async def test_an_empty_store_takes_any_embedder(any_store: Store) -> None:
    assert await any_store.memories_embedder() is None  # type: ignore[attr-defined]
    await check_embedder(any_store, Renamed())


async def test_the_store_says_which_embedder_made_its_newest_memory(any_store: Store) -> None:
    await remember(any_store, "I sleep badly")
    assert await any_store.memories_embedder() == (HASH.model_name, HASH.dim)  # type: ignore[attr-defined]
    await check_embedder(any_store, HashEmbedder())  # the same model: no complaint


async def test_another_model_is_refused_with_what_to_do(any_store: Store) -> None:
    await remember(any_store, "I sleep badly")
    with pytest.raises(ConfigError) as refused:
        await check_embedder(any_store, Renamed("nomic-embed-text"))
    message = str(refused.value)
    assert "'test/hash-bag-of-words' (384 dimensions)" in message
    assert "'nomic-embed-text' (384 dimensions)" in message
    assert "KINDRED_EMBEDDING_MODEL" in message and "new store" in message


async def test_another_size_than_the_store_holds_is_refused_even_when_empty(any_store: Store) -> None:
    with pytest.raises(ConfigError, match=r"whose vectors have 384 dimensions"):
        await check_embedder(any_store, Renamed("big/model", dim=768))


def settings_for(tmp_path: Path, **inference: object) -> Settings:
    return Settings(
        general=GeneralSettings(data_dir=tmp_path),
        store=StoreSettings(database_url=f"sqlite:///{tmp_path / 'kindred.db'}"),
        inference=InferenceSettings(**inference),
    )


async def test_sqlite_holds_the_size_of_the_servers_embedder(tmp_path: Path) -> None:
    settings = settings_for(
        tmp_path,
        embedding_backend="openai",
        embedding_url="http://e/v1",
        embedding_model="m",
        embedding_dim=768,
    )
    store = await open_store(settings)
    try:
        wide = Renamed("m", dim=768)
        await check_embedder(store, wide)
        await remember(store, "a wide vector", wide)
        assert await store.memories_embedder() == ("m", 768)  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_kindred_will_not_start_on_memories_of_another_model(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    store = await open_store(settings)
    try:
        await remember(store, "I sleep badly")
    finally:
        await store.close()

    async def other_models(settings: Settings, started: float) -> tuple[Embedder, Inference]:
        return Renamed("another/model"), ScriptedInference()

    with pytest.raises(ConfigError, match=r"embedded by 'test/hash-bag-of-words'"):
        await build(settings, load_models=other_models)
