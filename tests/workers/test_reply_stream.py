"""The reply stream's guarantees on a real Redis, without workers: one writer at a time, a
reader's cancel stops the writer, a redelivered run continues where the last one stopped, and how
the engine's reply ended reaches the reader."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.core.errors import InferenceError
from bot.core.jobs import JobId, JobPayload
from bot.core.loading import LoadOnce
from bot.core.models import ChatMessage, EndReason, Sampled, StreamEnd
from bot.inference.gpu_workers.remote import RemoteInference
from bot.inference.gpu_workers.reply_stream import GENERATE_JOB, ReplyKeys, parse_entry
from bot.inference.gpu_workers.serving import CANCELLED, SUPERSEDED, WRITTEN, ReplyWriter, serve
from tests.jobs.workerproc import TEST_REDIS_DB, redis_url

HI = [ChatMessage("user", "hi")]


@pytest.fixture
async def client() -> AsyncIterator[aioredis.Redis]:
    found = aioredis.Redis.from_url(redis_url(TEST_REDIS_DB + 2))
    yield found
    await found.aclose()


def fresh_keys() -> ReplyKeys:
    return ReplyKeys(f"test-{uuid.uuid4().hex}")


async def test_a_run_that_lost_the_request_can_no_longer_write(client: aioredis.Redis) -> None:
    keys = fresh_keys()
    first, second = ReplyWriter(client, keys, 60), ReplyWriter(client, keys, 60)
    assert await first.take_over() is not None
    assert await first.write("chunk", 0, "Hel") == WRITTEN
    taken = await second.take_over()
    assert taken is not None and (taken.text, taken.chunks, taken.finished) == ("Hel", 1, False)
    assert await first.write("chunk", 1, "lo") == SUPERSEDED  # fenced out: no interleaving
    assert await second.write("chunk", 1, "lo!") == WRITTEN
    assert await second.write("end", 2) == WRITTEN
    again = await ReplyWriter(client, keys, 60).take_over()
    assert again is not None and again.finished and again.text == "Hello!"
    assert 0 < await client.ttl(keys.stream) <= 60 and 0 < await client.ttl(keys.owner) <= 60


async def test_a_cancelled_request_is_neither_written_nor_taken(client: aioredis.Redis) -> None:
    keys = fresh_keys()
    writer = ReplyWriter(client, keys, 60)
    assert await writer.take_over() is not None
    await client.set(keys.cancel, "1", ex=60)
    assert await writer.write("chunk", 0, "x") == CANCELLED
    assert await ReplyWriter(client, keys, 60).take_over() is None


class RecordingEngine:
    """Stands in for LocalInference: records what it was asked and answers with fixed chunks,
    saying the reply ended with `reason`."""

    def __init__(self, reason: EndReason = "stop") -> None:
        self.calls: list[dict[str, Any]] = []
        self.reason = reason

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None,
        continue_from: str,
        ending: StreamEnd | None = None,
        seed: int | None = None,
        candidate: int = 0,
    ) -> AsyncGenerator[str, None]:
        self.calls.append(
            {
                "max_tokens": max_tokens,
                "continue_from": continue_from,
                "adapter": adapter,
                "seed": seed,
                "candidate": candidate,
            }
        )
        for word in (" and", " on."):
            yield word
        if ending is not None:
            ending.reason = self.reason


async def test_a_redelivered_run_continues_after_what_was_written(client: aioredis.Redis) -> None:
    keys = fresh_keys()
    dead = ReplyWriter(client, keys, 60)
    await dead.take_over()
    for seq, text in enumerate(["Once", " upon", " a time"]):
        assert await dead.write("chunk", seq, text) == WRITTEN
    engine = RecordingEngine("length")
    payload = {
        "request_id": keys.request_id,
        "messages": [{"role": "user", "content": "a story"}],
        "max_tokens": 10,
        "adapter": None,
        "expires_at": 0,  # long past: a request already under way is continued all the same
    }
    result = await serve(payload, LoadOnce(lambda: engine), client)  # type: ignore[arg-type, return-value]
    assert result["status"] == "done" and result["chunks"] == 5
    assert engine.calls == [
        {"max_tokens": 6, "continue_from": "Once upon a time", "adapter": None, "seed": None, "candidate": 0}
    ]
    raw = await client.xrange(keys.stream)
    kinds = [(f[b"k"].decode(), int(f[b"seq"]), f[b"t"].decode()) for _, f in raw]
    assert kinds[3:] == [("start", 3, ""), ("chunk", 3, " and"), ("chunk", 4, " on."), ("end", 5, "")]
    assert parse_entry(raw[-1][1]).reason == "length", "the end says the budget stopped the reply"

    # Delivered once more after it finished: nothing is generated or written again.
    assert (await serve(payload, LoadOnce(lambda: engine), client))["status"] == "done"  # type: ignore[arg-type, return-value]
    assert len(engine.calls) == 1 and len(await client.xrange(keys.stream)) == len(raw)


async def test_a_seeded_candidate_reaches_the_engine_and_a_bad_one_is_refused(client: aioredis.Redis) -> None:
    engine = RecordingEngine()
    payload = {
        "request_id": fresh_keys().request_id,
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 10,
        "adapter": None,
        "expires_at": time.time() + 60,
        "seed": 41,
        "candidate": 3,
    }
    assert (await serve(payload, LoadOnce(lambda: engine), client))["status"] == "done"  # type: ignore[arg-type, return-value]
    assert engine.calls[0]["seed"] == 41 and engine.calls[0]["candidate"] == 3
    for bad in ({"seed": "41"}, {"seed": True}, {"candidate": -1}, {"candidate": 1.5}):
        refused = {**payload, "request_id": fresh_keys().request_id, **bad}
        with pytest.raises(ValueError, match=r"bad inference request: (seed|candidate)"):
            await serve(refused, LoadOnce(lambda: engine), client)  # type: ignore[arg-type, return-value]
    assert len(engine.calls) == 1


async def test_a_request_nobody_waits_for_any_more_is_dropped(client: aioredis.Redis) -> None:
    keys = fresh_keys()
    engine = RecordingEngine()
    payload = {
        "request_id": keys.request_id,
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 10,
        "adapter": None,
        "expires_at": 0,
    }
    result = await serve(payload, LoadOnce(lambda: engine), client)  # type: ignore[arg-type, return-value]
    assert result["status"] == "expired" and engine.calls == []


class ServingJobs:
    """Jobs that serve each generate request at once, on the test's event loop, from `engine`: the
    worker's side of the reply stream without a worker process."""

    def __init__(self, engine: RecordingEngine, client: aioredis.Redis) -> None:
        self.loop = asyncio.get_running_loop()
        self.engine = engine
        self.client = client
        self.served: list[concurrent.futures.Future[JobPayload]] = []

    def submit(self, name: str, payload: JobPayload) -> JobId:
        assert name == GENERATE_JOB
        job = serve(payload, LoadOnce(lambda: self.engine), self.client)  # type: ignore[arg-type]
        self.served.append(asyncio.run_coroutine_threadsafe(job, self.loop))
        return JobId(str(payload["request_id"]))

    async def result(self, job_id: JobId, timeout_s: float) -> JobPayload:
        # RemoteInference reads the reply from Redis, never a job's result: a call is a bug.
        raise NotImplementedError

    async def lost(self, job_id: JobId) -> bool:
        return False

    async def depths(self) -> dict[str, int]:
        return {}

    async def close(self) -> None:
        pass


@pytest.mark.parametrize("reason", ["stop", "length"])
async def test_how_the_engine_ended_the_reply_reaches_the_reader(
    client: aioredis.Redis, reason: EndReason
) -> None:
    jobs = ServingJobs(RecordingEngine(reason), client)
    remote = RemoteInference(
        jobs, redis_url(TEST_REDIS_DB + 2), count_tokens=len, context_window=2048, wait_s=10.0, timeout_s=10.0
    )
    ending = StreamEnd()
    chunks = [chunk async for chunk in remote.stream(HI, max_tokens=10, ending=ending)]
    assert chunks == [" and", " on."]
    assert ending.reason == reason
    assert (await asyncio.wrap_future(jobs.served[0]))["status"] == "done"


async def test_an_end_without_a_reason_says_nothing() -> None:
    """An end entry from a worker that does not write `r` (an older one) is read as "cannot say"."""
    end = {b"k": b"end", b"run": b"r1", b"seq": b"2", b"t": b""}
    old = parse_entry(end)
    assert old.kind == "end" and old.reason is None
    assert parse_entry({**end, b"r": b"length"}).reason == "length"
    assert parse_entry({**end, b"r": b"tool_calls"}).reason is None


class FailingCandidate(RecordingEngine):
    """Fails the one candidate numbered `failing`, as an engine error does."""

    def __init__(self, failing: int) -> None:
        super().__init__()
        self.failing = failing

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[str, None]:
        if kwargs.get("candidate") == self.failing:
            raise InferenceError("the GPU ran out of memory")
        async for chunk in super().stream(*args, **kwargs):
            yield chunk


@pytest.mark.parametrize("reason", ["stop", "length"])
async def test_sampled_candidates_are_one_request_each_with_their_number_and_the_seed(
    client: aioredis.Redis, reason: EndReason
) -> None:
    jobs = ServingJobs(RecordingEngine(reason), client)
    remote = RemoteInference(
        jobs, redis_url(TEST_REDIS_DB + 2), count_tokens=len, context_window=2048, wait_s=10.0, timeout_s=10.0
    )
    found = await remote.sample(HI, n=3, max_tokens=10, seed=7)
    assert found == [Sampled(" and on.", reason == "length")] * 3
    assert sorted((c["seed"], c["candidate"]) for c in jobs.engine.calls) == [(7, 0), (7, 1), (7, 2)]
    assert len(jobs.served) == 3
    with pytest.raises(ValueError, match="n must be at least 1"):
        await remote.sample(HI, n=0, max_tokens=10)


async def test_a_candidate_that_fails_fails_the_sample(client: aioredis.Redis) -> None:
    jobs = ServingJobs(FailingCandidate(failing=1), client)
    remote = RemoteInference(
        jobs, redis_url(TEST_REDIS_DB + 2), count_tokens=len, context_window=2048, wait_s=10.0, timeout_s=10.0
    )
    with pytest.raises(InferenceError, match="the GPU ran out of memory"):
        await remote.sample(HI, n=3, max_tokens=10)
