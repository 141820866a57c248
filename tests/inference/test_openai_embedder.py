"""The OpenAI-compatible embedder against a loopback server over real HTTP: what it sends, and how
each way a server can fail becomes one InferenceError (or InferenceTimeout) that never carries the
key, after which the embedder keeps working. The shared Embedder contract runs on it too
(test_embedder_contract.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from bot.core.errors import InferenceError, InferenceTimeout
from bot.inference.embedders.openai import OpenAIEmbedder
from tests.inference.openai_server import EmbeddingFailure, FakeOpenAI
from tests.support.fakes import HashEmbedder

KEY = "sk-embed-very-secret-123"


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    fake = await FakeOpenAI().start()
    yield fake
    await fake.close()


@pytest.fixture
async def embedder(server: FakeOpenAI) -> AsyncIterator[OpenAIEmbedder]:
    made = OpenAIEmbedder(
        f"{server.base_url}/v1/", model="nomic-embed-text", dim=384, api_key=KEY, batch_size=3
    )
    yield made
    await made.close()


async def test_texts_go_in_batches_with_the_model_and_key(
    server: FakeOpenAI, embedder: OpenAIEmbedder
) -> None:
    texts = [f"text {i}" for i in range(7)]
    vectors = await embedder.embed(texts)
    assert [len(body["input"]) for body in server.embedding_requests] == [3, 3, 1]
    assert {body["model"] for body in server.embedding_requests} == {"nomic-embed-text"}
    assert server.embedding_headers[0]["Authorization"] == f"Bearer {KEY}"
    hashed = HashEmbedder()
    for text, vector in zip(texts, vectors, strict=True):  # in order, though the server reversed them
        np.testing.assert_allclose(vector, hashed.vector(text), atol=1e-6)


async def test_no_texts_send_no_request(server: FakeOpenAI, embedder: OpenAIEmbedder) -> None:
    assert await embedder.embed([]) == []
    assert server.embedding_requests == []


HOSTILE: list[tuple[EmbeddingFailure, str]] = [
    ("401", r"refused the API key \(HTTP 401\); check KINDRED_EMBEDDING_API_KEY"),
    ("500", r"failed \(HTTP 500\): model crashed"),
    ("not_json", r"a body that is not JSON"),
    (
        "wrong_dim",
        r"sent 385-dimensional embeddings from model 'nomic-embed-text', but KINDRED_EMBEDDING_DIM is 384",
    ),
    ("too_few", r"sent 1 embeddings for 2 texts"),
    ("not_numbers", r"not a list of numbers"),
]


@pytest.mark.parametrize(("failure", "message"), HOSTILE, ids=[failure for failure, _ in HOSTILE])
async def test_a_failing_server_is_one_clear_error_without_the_key(
    server: FakeOpenAI, embedder: OpenAIEmbedder, failure: EmbeddingFailure, message: str
) -> None:
    server.fail_next_embedding(failure)
    with pytest.raises(InferenceError, match=message) as raised:
        await embedder.embed(["one", "two"])
    assert KEY not in str(raised.value) and KEY not in repr(raised.value.__cause__)
    assert len(await embedder.embed(["and after it"])) == 1  # the next request works


async def test_a_server_that_does_not_answer_in_time_is_a_timeout(server: FakeOpenAI) -> None:
    slow = OpenAIEmbedder(f"{server.base_url}/v1", model="m", dim=384, timeout_s=0.3)
    server.fail_next_embedding("stall")
    try:
        with pytest.raises(InferenceTimeout, match=r"did not answer within 0.3 s"):
            await slow.embed(["hello"])
    finally:
        await slow.close()


async def test_an_unreachable_server_is_an_inference_error() -> None:
    gone = OpenAIEmbedder("http://127.0.0.1:9/v1", model="m", dim=384, api_key=KEY)
    try:
        with pytest.raises(
            InferenceError, match=r"cannot reach the embeddings server at http://127.0.0.1:9/v1"
        ) as raised:
            await gone.embed(["hello"])
        assert KEY not in str(raised.value)
    finally:
        await gone.close()
