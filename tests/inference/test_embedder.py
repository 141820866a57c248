"""SentenceTransformerEmbedder with the bundled all-MiniLM-L6-v2 (the shared `minilm` fixture):
what is its own. What every Embedder promises is in test_embedder_contract.py."""

from __future__ import annotations

import os

# Set before sentence-transformers is imported anywhere: any attempt to download fails instead.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import asyncio

import numpy as np
import pytest

from bot.core.errors import InferenceError
from bot.inference.embedders.sentence import BUNDLED_NAME, SentenceTransformerEmbedder
from tests.support.loop_watch import heartbeat_during

pytestmark = pytest.mark.model


async def test_the_bundled_model_is_minilm_with_384_dimensions(minilm: SentenceTransformerEmbedder) -> None:
    assert minilm.model_name == BUNDLED_NAME
    assert minilm.dim == 384


async def test_a_long_text_is_read_up_to_the_models_limit(minilm: SentenceTransformerEmbedder) -> None:
    head = "coffee " * minilm.max_seq_length  # already past the limit: what follows is never read
    a, b = await minilm.embed([head + "my sister lives in Lyon", head + "the quarterly report is late"])
    np.testing.assert_allclose(a, b, atol=1e-6)


async def test_similar_sentences_are_closer(minilm: SentenceTransformerEmbedder) -> None:
    cue, related, unrelated = await minilm.embed(
        [
            "I have been sleeping badly lately",
            "I keep waking up at night and can't get back to sleep",
            "The quarterly sales report is due on Friday",
        ]
    )
    assert float(cue @ related) > float(cue @ unrelated) + 0.2


async def test_concurrent_calls_are_merged_into_batches(
    minilm: SentenceTransformerEmbedder,
) -> None:
    texts = [f"memory number {i} about tea and books" for i in range(50)]
    before = minilm.batches_run
    results = await asyncio.gather(*(minilm.embed([text]) for text in texts))
    batches = minilm.batches_run - before
    assert 1 <= batches < 10
    expected = await minilm.embed(texts[:3])
    for got, want in zip(results[:3], expected, strict=True):
        np.testing.assert_allclose(got[0], want, atol=1e-5)


async def test_event_loop_keeps_running_while_embedding(
    minilm: SentenceTransformerEmbedder,
) -> None:
    _, beat = await heartbeat_during(
        minilm.embed([f"a long paragraph {i} " + "word " * 200 for i in range(24)])
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
