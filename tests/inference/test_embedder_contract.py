"""One contract for every Embedder: the real SentenceTransformerEmbedder on the bundled MiniLM, the
same model through ONNX Runtime (OnnxEmbedder), the OpenAIEmbedder against a loopback
OpenAI-compatible server over real HTTP (tests/inference/openai_server.py, which serves the hash
vectors, in batches of 2 so that batching is crossed), and the deterministic HashEmbedder
(tests/support/fakes.py) that the core's tests stand on, so that what they rely on is what the real
ones do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from bot.core.memory.ports import Embedder
from bot.inference.embedders.openai import OpenAIEmbedder
from tests.inference.openai_server import FakeOpenAI
from tests.support.fakes import HashEmbedder

LONG = "coffee " * 5000  # far past MiniLM's 256 tokens


@pytest.fixture(scope="module")
async def openai_hash() -> AsyncIterator[OpenAIEmbedder]:
    server = await FakeOpenAI().start()
    embedder = OpenAIEmbedder(f"{server.base_url}/v1", model="hash", dim=HashEmbedder.dim, batch_size=2)
    yield embedder
    await embedder.close()
    await server.close()


@pytest.fixture(
    params=[
        pytest.param("minilm", marks=pytest.mark.model),
        pytest.param("onnx_minilm", marks=pytest.mark.model),
        "openai_hash",
        "hash",
    ]
)
def embedder(request: pytest.FixtureRequest) -> Embedder:
    if request.param != "hash":
        found: Embedder = request.getfixturevalue(request.param)  # tests/conftest.py, once per module
        return found
    return HashEmbedder()


def assert_unit(vector: np.ndarray, dim: int) -> None:
    assert vector.dtype == np.float32
    assert vector.shape == (dim,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


async def test_every_text_gets_a_unit_float32_vector_of_the_models_size(embedder: Embedder) -> None:
    texts = ["I sleep badly", "", LONG, "🙂"]  # an empty and a very long text too: no error
    vectors = await embedder.embed(texts)
    assert len(vectors) == len(texts)
    for vector in vectors:
        assert_unit(vector, embedder.dim)


async def test_no_texts_means_no_vectors(embedder: Embedder) -> None:
    assert await embedder.embed([]) == []


async def test_vectors_are_deterministic_and_in_input_order(embedder: Embedder) -> None:
    alone = await embedder.embed(["the cat sat on the mat"])
    together = await embedder.embed(["a different sentence", "the cat sat on the mat"])
    np.testing.assert_allclose(alone[0], together[1], atol=1e-5)
    assert float(together[0] @ together[1]) < 0.9


async def test_a_batch_equals_its_texts_one_by_one(embedder: Embedder) -> None:
    texts = ["tea with milk", "", "my sister lives in Lyon", LONG]
    batch = await embedder.embed(texts)
    for text, vector in zip(texts, batch, strict=True):
        (single,) = await embedder.embed([text])
        np.testing.assert_allclose(vector, single, atol=1e-5)


async def test_concurrent_callers_each_get_their_own_vectors(embedder: Embedder) -> None:
    texts = [f"memory number {i} about tea and books" for i in range(6)]
    results = await asyncio.gather(*(embedder.embed([text]) for text in texts))
    expected = await embedder.embed(texts)
    for (got,), want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


async def test_the_dimension_is_stable_and_named(embedder: Embedder) -> None:
    assert isinstance(embedder.model_name, str) and embedder.model_name
    dims = {len(v) for v in await embedder.embed(["a", "a much longer sentence about the weather", LONG])}
    assert dims == {embedder.dim}
    assert len((await embedder.embed(["again"]))[0]) == embedder.dim
