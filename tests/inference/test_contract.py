"""One contract for every Inference backend: local, celery (a real worker process) and openai (a
loopback server); backends.py says how each is set up. Each test runs on all three."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from pathlib import Path
from typing import Literal, cast

import pytest

from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.models import ChatMessage, Sampled, StreamEnd
from bot.inference.engine.local import LocalInference
from tests.inference.backends import (
    Backend,
    celery_backend,
    close,
    fake_openai,
    local_backend,
    local_engine,
    openai_backend,
)
from tests.inference.lora_files import make_adapter
from tests.jobs.workerproc import TEST_REDIS_DB, Worker, flush, redis_url
from tests.support.loop_watch import heartbeat_during
from tests.support.streams import collect, text_of
from tests.support.waiting import wait_until
from tests.workers.remote_support import gpu_worker

HELLO = [ChatMessage("user", "hi there")]
LONG_REPLY = 1500  # longer than any backend here writes before a test walks away from it
# tests/workers/test_remote_inference.py uses this database too. Both start their worker per
# module, so the two are never alive together and neither takes the other's requests.
CELERY_DB = TEST_REDIS_DB + 2
STOP_WITHIN_S = 10.0


@pytest.fixture(scope="module")
def adapters(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The LoRA adapters folder every backend serves: one adapter, `one`."""
    root = tmp_path_factory.mktemp("contract-adapters")
    make_adapter(tiny_dir, root / "one", seed=1)
    return root


@pytest.fixture(scope="module")
def engine(tiny_dir: Path, adapters: Path) -> LocalInference:
    return local_engine(tiny_dir, adapters)


@pytest.fixture(scope="module")
def celery_url() -> Iterator[str]:
    url = redis_url(CELERY_DB)
    flush(url)
    yield url
    flush(url)


@pytest.fixture(scope="module")
def gpu(
    celery_url: str, tiny_dir: Path, adapters: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Worker]:
    """One greedy GPU-queue worker; 0.02 s after each chunk, so that a long reply is still running
    when a test walks away from it."""
    started = gpu_worker(
        celery_url,
        tmp_path_factory.mktemp("contract-gpu"),
        tiny_dir,
        pace_s=0.02,
        KINDRED_ADAPTERS_DIR=str(adapters),
        KINDRED_TEMPERATURE="0",
    )
    try:
        yield started.wait_ready()
    finally:
        started.kill()


@pytest.fixture(params=["local", "celery", "openai"])
async def backend(
    request: pytest.FixtureRequest, tiny_dir: Path, adapters: Path, tmp_path: Path
) -> AsyncIterator[Backend]:
    if request.param == "local":
        yield local_backend(request.getfixturevalue("engine"), tiny_dir, adapters)
        return  # the engine is shared by the module
    if request.param == "celery":
        url = request.getfixturevalue("celery_url")
        made = celery_backend(url, request.getfixturevalue("gpu"), tiny_dir, tmp_path)
        try:
            yield made
        finally:
            await close(made.inference)
        return
    server = await fake_openai().start()
    made = openai_backend(server, tiny_dir, adapters)
    try:
        yield made
    finally:
        await close(made.inference)
        await server.close()


async def test_a_reply_streams_as_text_chunks(backend: Backend) -> None:
    chunks = await collect(backend.inference.stream(HELLO, max_tokens=40))
    assert len(chunks) > 1
    assert all(isinstance(chunk, str) and chunk for chunk in chunks)


@pytest.mark.parametrize("max_tokens", [1, 5, 40])
async def test_max_tokens_bounds_the_reply(backend: Backend, max_tokens: int) -> None:
    chunks = await collect(backend.inference.stream(HELLO, max_tokens=max_tokens))
    assert 0 < len(chunks) <= max_tokens  # every chunk carries at least one new token
    # Every backend here is greedy: a sampled reply of random weights may hold a broken character
    # that the tokenizer reads back as more tokens than were written.
    assert 0 < backend.inference.count_tokens("".join(chunks)) <= max_tokens


async def test_max_tokens_below_one_is_refused(backend: Backend) -> None:
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        await collect(backend.inference.stream(HELLO, max_tokens=0))


async def test_a_reply_past_the_time_limit_is_an_inference_timeout_and_generation_stops(
    backend: Backend,
) -> None:
    impatient = backend.impatient()
    try:
        started = time.monotonic()
        with pytest.raises(InferenceTimeout, match=rf"within {backend.timeout_s:g} s") as raised:
            await collect(impatient.stream(HELLO, max_tokens=LONG_REPLY))
        assert time.monotonic() - started < backend.timeout_s + backend.overhead_s
        assert "KINDRED_GENERATION_TIMEOUT_S" in str(raised.value)  # the setting to change
        await wait_until(backend.stopped, STOP_WITHIN_S, what=f"{backend.name} stopped generating")
    finally:
        await close(impatient)


async def walk_away(replies: AsyncIterator[str], how: Literal["close", "break", "cancel"]) -> None:
    """Read the first chunk of a long reply, then stop reading it in one of three ways."""
    if how == "close":
        assert isinstance(await anext(replies), str)
        await cast(AsyncGenerator[str, None], replies).aclose()
    elif how == "break":
        async for chunk in replies:
            assert isinstance(chunk, str)
            break  # the dropped generator is closed by asyncio's finaliser hook
    else:
        first = asyncio.Event()

        async def consume() -> None:
            async for _ in replies:
                first.set()
                await asyncio.sleep(3600)  # a slow consumer: surely inside the stream when cancelled

        task = asyncio.create_task(consume())
        await asyncio.wait_for(first.wait(), timeout=60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.mark.parametrize("how", ["close", "break", "cancel"])
async def test_a_consumer_that_walks_away_stops_the_generation(
    backend: Backend, how: Literal["close", "break", "cancel"]
) -> None:
    await walk_away(backend.inference.stream(HELLO, max_tokens=LONG_REPLY), how)
    await wait_until(backend.stopped, STOP_WITHIN_S, what=f"{backend.name} stopped generating")
    assert await text_of(backend.inference.stream(HELLO, max_tokens=5))  # and it goes on


async def test_an_adapter_is_asked_for_by_name(backend: Backend) -> None:
    base = await text_of(backend.inference.stream(HELLO, max_tokens=16))
    tuned = await text_of(backend.inference.stream(HELLO, max_tokens=16, adapter="one"))
    assert base and tuned
    assert tuned != base, "the adapter must change the reply"


async def test_an_unknown_adapter_is_an_inference_error_and_the_backend_goes_on(backend: Backend) -> None:
    with pytest.raises(InferenceError, match="unknown LoRA adapter 'ghost'"):
        await collect(backend.inference.stream(HELLO, max_tokens=5, adapter="ghost"))
    assert await text_of(backend.inference.stream(HELLO, max_tokens=5))


async def test_tokens_are_counted_with_the_models_tokenizer(backend: Backend) -> None:
    count = backend.inference.count_tokens
    assert count("") == 0
    assert count("hello world") == 2  # no chat-template markers counted
    assert count("hello world, again and again") > count("hello world")
    assert backend.inference.context_window == 2048


async def test_concurrent_replies_each_arrive_whole(backend: Backend) -> None:
    replies = await asyncio.gather(
        text_of(backend.inference.stream(HELLO, max_tokens=20)),
        text_of(backend.inference.stream([ChatMessage("user", "and you?")], max_tokens=20)),
    )
    assert all(reply for reply in replies)


async def test_the_event_loop_keeps_running_during_a_reply(backend: Backend) -> None:
    _, beat = await heartbeat_during(collect(backend.inference.stream(HELLO, max_tokens=300)))
    beat.assert_never_blocked()


async def test_sample_gives_n_whole_candidates_cut_as_a_stream_would_be(backend: Backend) -> None:
    ending = StreamEnd()
    await text_of(backend.inference.stream(HELLO, max_tokens=8, ending=ending))
    found = await backend.inference.sample(HELLO, n=3, max_tokens=8)
    assert len(found) == 3 and all(isinstance(c, Sampled) and c.text for c in found)
    assert all(0 < backend.inference.count_tokens(c.text) <= 8 for c in found)
    assert [c.cut for c in found] == [ending.reason == "length"] * 3  # every backend here is greedy


async def test_sample_refuses_what_stream_refuses(backend: Backend) -> None:
    with pytest.raises(ValueError, match="n must be at least 1"):
        await backend.inference.sample(HELLO, n=0, max_tokens=5)
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        await backend.inference.sample(HELLO, n=2, max_tokens=0)
    with pytest.raises(InferenceError, match="unknown LoRA adapter 'ghost'"):
        await backend.inference.sample(HELLO, n=2, max_tokens=5, adapter="ghost")
    assert len(await backend.inference.sample(HELLO, n=2, max_tokens=5, adapter="one")) == 2


async def test_sample_past_the_time_limit_is_an_inference_timeout_and_generation_stops(
    backend: Backend,
) -> None:
    impatient = backend.impatient()
    try:
        started = time.monotonic()
        with pytest.raises(InferenceTimeout, match=rf"within {backend.timeout_s:g} s"):
            await impatient.sample(HELLO, n=2, max_tokens=LONG_REPLY)
        assert time.monotonic() - started < backend.timeout_s + backend.overhead_s
        await wait_until(backend.stopped, STOP_WITHIN_S, what=f"{backend.name} stopped generating")
    finally:
        await close(impatient)
