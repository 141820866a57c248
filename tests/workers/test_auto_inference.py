"""KINDRED_INFERENCE_BACKEND=auto: the bot's replies follow the GPU worker. Real parts: a private
redis-server, real GPU-queue worker processes (CPU torch, the tiny model) that join and are
SIGKILLed, and the local engine on the same tiny model, all built by `load_inference`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.models import ChatMessage
from bot.inference.auto import AutoInference
from bot.wiring.backends import load_inference
from bot.wiring.settings import Settings, WorkerSettings, load_settings
from tests.jobs.workerproc import RedisServer, Worker, free_port
from tests.support.tiny_model import build_tiny_model
from tests.support.waiting import wait_until
from tests.workers.remote_support import chat_settings, gpu_worker, reply_streams

HELLO = [ChatMessage("user", "Hello there, how are you?")]
RECHECK_S = 0.5


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    started = RedisServer(tmp_path / "redis").start()
    try:
        yield started
    finally:
        started.stop()


def auto_settings(url: str, folder: Path, model: Path, *, wait_s: float = 60.0) -> Settings:
    settings = chat_settings(url, folder, model, wait_s=wait_s)
    inference = settings.inference.model_copy(update={"backend": "auto", "recheck_s": RECHECK_S})
    return settings.model_copy(update={"inference": inference})


async def reply(inference: AutoInference, max_tokens: int = 6) -> str:
    return "".join([chunk async for chunk in inference.stream(HELLO, max_tokens=max_tokens)])


async def test_replies_move_to_a_gpu_worker_that_joins_and_back_to_the_local_engine_when_it_dies(
    server: RedisServer, tiny: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    inference = load_inference(auto_settings(server.url, tmp_path, tiny))
    assert isinstance(inference, AutoInference)
    worker: Worker | None = None
    try:
        assert inference.chosen == "local"
        assert "no GPU worker: replies from the local engine" in caplog.text
        assert "local inference model loaded" not in caplog.text  # nothing loaded before a reply needs it
        assert await reply(inference)
        assert reply_streams(server.url) == []  # answered here, not through Redis

        # As `kindred worker --queues gpu` runs one: threads, so it answers Celery while it generates.
        worker = gpu_worker(server.url, tmp_path / "gpu", tiny, pool="threads", threads=2).wait_ready()

        async def moved() -> bool:
            await reply(inference)
            return bool(reply_streams(server.url))

        await wait_until(moved, 60, what="a reply written by the GPU worker")
        assert inference.chosen == "celery"
        assert "replies go to it (celery)" in caplog.text
        served = len(reply_streams(server.url))
        assert await reply(inference) and len(reply_streams(server.url)) == served + 1

        worker.kill()
        worker = None
        # The next reply is sent to the workers; nobody starts it, so Celery is asked again and
        # the reply comes from the local engine instead: no error, nothing shown twice.
        started = time.monotonic()
        assert await reply(inference)
        assert time.monotonic() - started < 20  # not KINDRED_INFERENCE_WAIT_S (60 s)
        assert inference.chosen == "local"
        assert "a reply no worker started comes from the local engine instead" in caplog.text
        assert len(reply_streams(server.url)) == served + 1
        assert await reply(inference) and len(reply_streams(server.url)) == served + 1
        assert caplog.text.count("local inference model loaded") == 1  # one load, kept across switches
    finally:
        if worker is not None:
            worker.kill()
        await inference.close()


async def test_with_redis_gone_a_reply_meant_for_the_workers_comes_from_the_local_engine(
    server: RedisServer, tiny: Path, tmp_path: Path
) -> None:
    worker = gpu_worker(server.url, tmp_path / "gpu", tiny, pool="threads", threads=2).wait_ready()
    inference = load_inference(auto_settings(server.url, tmp_path, tiny))
    assert isinstance(inference, AutoInference)
    try:
        assert inference.chosen == "celery"
        server.stop()
        started = time.monotonic()
        assert await reply(inference)  # "busy" from the workers' side: the local engine answers
        assert time.monotonic() - started < 15
        assert inference.chosen == "local"
        assert await reply(inference)
    finally:
        worker.kill()
        await inference.close()


async def test_replies_that_find_the_worker_dead_together_load_the_local_model_once(
    server: RedisServer, tiny: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    worker = gpu_worker(server.url, tmp_path / "gpu", tiny, pool="threads", threads=2).wait_ready()
    inference = load_inference(auto_settings(server.url, tmp_path, tiny))
    assert isinstance(inference, AutoInference)
    try:
        assert inference.chosen == "celery" and await reply(inference)
        worker.kill()
        texts = await asyncio.gather(*(reply(inference) for _ in range(4)))
        assert all(texts) and inference.chosen == "local"
        assert caplog.text.count("local inference model loaded") == 1
        assert caplog.text.count("a reply no worker started comes from the local engine instead") == 4
    finally:
        worker.kill()
        await inference.close()


async def test_a_reply_in_flight_on_the_local_engine_ends_there_when_a_worker_joins(
    server: RedisServer, tiny: Path, tmp_path: Path
) -> None:
    inference = load_inference(auto_settings(server.url, tmp_path, tiny))
    assert isinstance(inference, AutoInference)
    worker = gpu_worker(server.url, tmp_path / "gpu", tiny)
    try:
        long_reply = inference.stream(HELLO, max_tokens=40)
        first = await anext(long_reply)  # the local engine is loaded and streaming
        worker.wait_ready()
        await asyncio.to_thread(inference.refresh)
        assert inference.chosen == "celery"
        assert await reply(inference) and len(reply_streams(server.url)) == 1  # the next one: the worker
        rest = [chunk async for chunk in long_reply]
        assert first + "".join(rest)  # the first one ended, where it began
        assert len(reply_streams(server.url)) == 1
    finally:
        worker.kill()
        await inference.close()


async def test_with_redis_unreachable_auto_answers_from_the_local_engine(
    tiny: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    inference = load_inference(auto_settings(url, tmp_path, tiny))
    assert isinstance(inference, AutoInference)
    try:
        assert inference.chosen == "local"
        assert "cannot ask the workers (Redis does not answer" in caplog.text
        assert await reply(inference)
    finally:
        await inference.close()


def test_auto_is_the_default_with_redis_and_local_without(
    monkeypatch: pytest.MonkeyPatch, tiny: Path, tmp_path: Path
) -> None:
    monkeypatch.delenv("KINDRED_INFERENCE_BACKEND", raising=False)
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    assert load_settings(env_file=None).inference.backend == "auto"
    assert Settings(workers=WorkerSettings(REDIS_URL="redis://h")).inference.backend == "auto"
    monkeypatch.setenv("KINDRED_INFERENCE_BACKEND", "local")  # said: kept, Redis or not
    assert load_settings(env_file=None).inference.backend == "local"
    monkeypatch.delenv("KINDRED_INFERENCE_BACKEND")
    monkeypatch.delenv("REDIS_URL")
    assert load_settings(env_file=None).inference.backend == "local"
    # `auto` said without Redis: the local engine, nothing asked of anyone.
    settings = auto_settings("redis://unused", tmp_path, tiny)
    local = settings.model_copy(update={"workers": WorkerSettings(REDIS_URL=None)})
    engine = load_inference(local)
    try:
        assert not isinstance(engine, AutoInference)
        assert type(engine).__name__ == "LocalInference"
    finally:
        asyncio.run(engine.close())  # type: ignore[attr-defined]


async def test_candidates_come_from_the_worker_and_from_the_local_engine_once_redis_is_gone(
    server: RedisServer, tiny: Path, tmp_path: Path
) -> None:
    """One request per candidate to the workers, each with its number and the seed, so the worker's
    engine writes what the local one does; with Redis gone, the local engine answers them all."""
    worker = gpu_worker(server.url, tmp_path / "gpu", tiny, pool="threads", threads=4).wait_ready()
    inference = load_inference(auto_settings(server.url, tmp_path, tiny))
    assert isinstance(inference, AutoInference)
    try:
        assert inference.chosen == "celery"
        remote = await inference.sample(HELLO, n=3, max_tokens=6, seed=4)
        assert len(reply_streams(server.url)) == 3
        server.stop()
        started = time.monotonic()
        local = await inference.sample(HELLO, n=3, max_tokens=6, seed=4)
        assert time.monotonic() - started < 15
        assert inference.chosen == "local"
        assert local == remote and len({c.text for c in local}) == 3
    finally:
        worker.kill()
        await inference.close()
