"""SentenceTransformerEmbedder with the bundled all-MiniLM-L6-v2."""

from __future__ import annotations

import os

# Set before sentence-transformers is imported anywhere: any attempt to download fails instead.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from bot.core.errors import InferenceError
from bot.inference.embedder import BUNDLED_NAME, SentenceTransformerEmbedder
from tests.support.loop_watch import heartbeat_during


@pytest.fixture(scope="session")
async def embedder() -> AsyncIterator[SentenceTransformerEmbedder]:
    loaded = SentenceTransformerEmbedder.load()
    yield loaded
    await loaded.close()


async def test_vectors_are_unit_float32_of_the_model_size(
    embedder: SentenceTransformerEmbedder,
) -> None:
    texts = ["I sleep badly", "", "coffee " * 5000, "🙂"]
    vectors = await embedder.embed(texts)
    assert embedder.model_name == BUNDLED_NAME
    assert embedder.dim == 384
    assert len(vectors) == len(texts)
    for vector in vectors:
        assert vector.dtype == np.float32
        assert vector.shape == (384,)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


async def test_no_texts_means_no_vectors(embedder: SentenceTransformerEmbedder) -> None:
    assert await embedder.embed([]) == []


async def test_vectors_are_deterministic_and_in_input_order(
    embedder: SentenceTransformerEmbedder,
) -> None:
    alone = await embedder.embed(["the cat sat on the mat"])
    together = await embedder.embed(["a different sentence", "the cat sat on the mat"])
    np.testing.assert_allclose(alone[0], together[1], atol=1e-5)
    assert float(together[0] @ together[1]) < 0.9


async def test_similar_sentences_are_closer(embedder: SentenceTransformerEmbedder) -> None:
    cue, related, unrelated = await embedder.embed(
        [
            "I have been sleeping badly lately",
            "I keep waking up at night and can't get back to sleep",
            "The quarterly sales report is due on Friday",
        ]
    )
    assert float(cue @ related) > float(cue @ unrelated) + 0.2


async def test_concurrent_calls_are_merged_into_batches(
    embedder: SentenceTransformerEmbedder,
) -> None:
    texts = [f"memory number {i} about tea and books" for i in range(50)]
    before = embedder.batches_run
    results = await asyncio.gather(*(embedder.embed([text]) for text in texts))
    batches = embedder.batches_run - before
    assert 1 <= batches < 10
    expected = await embedder.embed(texts[:3])
    for got, want in zip(results[:3], expected, strict=True):
        np.testing.assert_allclose(got[0], want, atol=1e-5)


async def test_event_loop_keeps_running_while_embedding(
    embedder: SentenceTransformerEmbedder,
) -> None:
    _, beat = await heartbeat_during(
        embedder.embed([f"a long paragraph {i} " + "word " * 200 for i in range(24)])
    )
    beat.assert_never_blocked()


async def test_close_finishes_queued_work_and_stops_the_worker() -> None:
    own = SentenceTransformerEmbedder.load()
    assert own.running
    pending = asyncio.ensure_future(own.embed(["queued before close"]))
    await asyncio.sleep(0)  # let the request reach the queue
    await own.close()
    assert not own.running
    assert len(await pending) == 1
    with pytest.raises(InferenceError, match="closed"):
        await own.embed(["too late"])
    await own.close()  # a second close is a no-op
