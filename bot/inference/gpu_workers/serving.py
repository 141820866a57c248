"""Inference on a GPU worker: the worker side, the job `kindred.inference.generate`.

The job streams one reply from the local engine (`LocalInference.stream`, so batching and LoRA
adapters by name work as they do in one process) into the reply's Redis Stream
(`reply_stream.py`). The reader is `remote.py`; its docstring says why a reply survives a worker
that dies mid-way exactly once.

One run of the job:
1. Take the request over (`TAKE_OVER`): from now on only this run may write, and it gets what is
   already there. A cancelled request, or one already finished, is left alone; one that nobody
   started and whose reader has given up waiting (`expires_at`) is dropped.
2. Write `start` (with the chunk number it continues from), then each chunk numbered on from
   there, then `end` with how the reply ended (`stop`, or `length`: the token budget). Each
   write checks, in the same step, that this run still owns the request and that the reader has
   not cancelled; if either fails, the run stops generating.
3. A redelivered run continues after the chunks already written, with them as the beginning of
   the assistant's turn and the token budget that is left. A seeded request (`seed`, and
   `candidate`: which of a `sample`'s replies it is) is sampled as the local engine samples it;
   a continuation draws afresh, so a reply that outlived its worker is not the one the seed gives.
4. Any error is written as an `error` entry (the reader raises InferenceError with its text, or
   InferenceTimeout for the engine's time limit) and fails the job once; a bad payload is never
   retried.

The model is loaded once per worker process, on its first job (`LoadOnce`), never at import
and never before a fork: CUDA starts in the process that uses it. `CUDA_VISIBLE_DEVICES` is left
as the worker was started with.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import redis.asyncio as aioredis

from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.jobs import JobPayload
from bot.core.loading import LoadOnce
from bot.core.models import ChatMessage, EndReason, StreamEnd
from bot.inference.gpu_workers.reply_stream import (
    DEFAULT_TTL_S,
    TAKE_OVER,
    WRITE,
    Entry,
    Kind,
    Progress,
    ReplyKeys,
    parse_range,
    progress,
)

if TYPE_CHECKING:
    from bot.inference.engine.local import LocalInference

log = logging.getLogger(__name__)

# What a checked write answers (reply_stream.WRITE), and what it means for the job.
WRITTEN, SUPERSEDED, CANCELLED = 1, 0, -1
OUTCOMES = {WRITTEN: "done", SUPERSEDED: "superseded", CANCELLED: "cancelled"}
_ROLES = ("system", "user", "assistant")


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    request_id: str
    messages: tuple[ChatMessage, ...]
    max_tokens: int
    adapter: str | None
    expires_at: float
    seed: int | None = None
    candidate: int = 0

    @classmethod
    def from_payload(cls, payload: JobPayload) -> GenerateRequest:
        """The request a payload describes; ValueError naming what is wrong with it."""
        request_id = request_id_of(payload)
        if request_id is None:
            raise ValueError("bad inference request: request_id must be a short string")
        raw = payload.get("messages")
        if not isinstance(raw, list) or not raw:
            raise ValueError("bad inference request: messages must be a non-empty list")
        messages = []
        for item in raw:
            if not (
                isinstance(item, dict) and item.get("role") in _ROLES and isinstance(item.get("content"), str)
            ):
                raise ValueError("bad inference request: each message needs a role and a text content")
            messages.append(ChatMessage(role=item["role"], content=item["content"]))
        max_tokens, adapter, expires_at = (
            payload.get("max_tokens"),
            payload.get("adapter"),
            payload.get("expires_at"),
        )
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ValueError("bad inference request: max_tokens must be a positive integer")
        if adapter is not None and not isinstance(adapter, str):
            raise ValueError("bad inference request: adapter must be a name or null")
        if not isinstance(expires_at, int | float):
            raise ValueError("bad inference request: expires_at must be a unix time")
        seed, candidate = payload.get("seed"), payload.get("candidate", 0)
        if seed is not None and not _is_int(seed):
            raise ValueError("bad inference request: seed must be an integer or null")
        if not _is_int(candidate) or candidate < 0:
            raise ValueError("bad inference request: candidate must be a non-negative integer")
        return cls(request_id, tuple(messages), max_tokens, adapter, float(expires_at), seed, candidate)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def request_id_of(payload: JobPayload) -> str | None:
    value = payload.get("request_id")
    ok = isinstance(value, str) and 0 < len(value) <= 64 and value.isascii() and value.isprintable()
    return value if ok and isinstance(value, str) else None


class ReplyWriter:
    """One run's writes to one reply stream, each checked against ownership and cancellation."""

    def __init__(self, client: aioredis.Redis, keys: ReplyKeys, ttl_s: int) -> None:
        self.client = client
        self.keys = keys
        self.run = uuid.uuid4().hex[:12]
        self.ttl_s = ttl_s
        self.owned = False

    async def take_over(self) -> Progress | None:
        """Own the request and read what is there; None when the reader has cancelled it."""
        found = await self.client.eval(TAKE_OVER, 3, *self.keys.all(), self.run, str(self.ttl_s))
        if found is None:
            return None
        self.owned = True
        return progress(parse_range(found))

    async def write(
        self,
        kind: Kind,
        seq: int,
        text: str = "",
        *,
        timed_out: bool = False,
        reason: EndReason | None = None,
    ) -> int:
        entry = Entry(kind, self.run, seq, text, timed_out, reason)
        status = await self.client.eval(
            WRITE, 3, *self.keys.all(), self.run, str(self.ttl_s), *entry.fields()
        )
        return int(status)


async def serve(
    payload: JobPayload,
    engines: LoadOnce[LocalInference],
    client: aioredis.Redis,
    *,
    pace_s: float = 0.0,
    ttl_s: int = DEFAULT_TTL_S,
) -> JobPayload:
    """Run one generate job (see the module docstring). Raises for a bad payload or a failed
    generation, after telling the reader why."""
    request_id = request_id_of(payload)
    writer = ReplyWriter(client, ReplyKeys(request_id), ttl_s) if request_id else None
    try:
        request = GenerateRequest.from_payload(payload)
        assert writer is not None
        taken = await writer.take_over()
        if taken is None:
            log.info("reply %s: cancelled before it started; nothing generated", request_id)
            return {"request_id": request_id, "status": "cancelled", "chunks": 0}
        if taken.finished:
            log.info("reply %s: already complete; nothing to do", request_id)
            return {"request_id": request_id, "status": "done", "chunks": taken.chunks}
        if not taken.chunks and time.time() > request.expires_at:
            log.info("reply %s: its reader stopped waiting before any worker took it; dropped", request_id)
            return {"request_id": request_id, "status": "expired", "chunks": 0}
        if taken.chunks:
            log.info("reply %s: resuming after %d chunks of an earlier run", request_id, taken.chunks)
        # Said before the model loads: the reader's wait is for a worker, not for a warm one.
        status = await writer.write("start", taken.chunks)
        if status != WRITTEN:
            return {"request_id": request_id, "status": OUTCOMES[status], "chunks": taken.chunks}
        engine = await asyncio.to_thread(engines.get)
        return await _generate(engine, request, writer, taken, pace_s)
    except Exception as exc:
        if writer is not None:
            await _report(writer, exc)
        raise


async def _generate(
    engine: LocalInference, request: GenerateRequest, writer: ReplyWriter, taken: Progress, pace_s: float
) -> JobPayload:
    seq, status = taken.chunks, WRITTEN
    budget = request.max_tokens - (engine.count_tokens(taken.text) if taken.text else 0)
    # An earlier run that wrote the whole budget left nothing to write: the budget ended the reply.
    ending = StreamEnd(None if budget > 0 else "length")
    if budget > 0:
        chunks = engine.stream(
            list(request.messages),
            max_tokens=budget,
            adapter=request.adapter,
            continue_from=taken.text,
            ending=ending,
            seed=request.seed,
            candidate=request.candidate,
        )
        async with contextlib.aclosing(chunks):
            async for text in chunks:
                status = await writer.write("chunk", seq, text)
                if status != WRITTEN:
                    break  # leaving the loop closes the stream: the model stops this row
                seq += 1
                if pace_s > 0:
                    await asyncio.sleep(pace_s)
    if status == WRITTEN:
        status = await writer.write("end", seq, reason=ending.reason)
    outcome = OUTCOMES[status]
    if status != WRITTEN:
        log.info("reply %s: %s after %d chunks; generation stopped", request.request_id, outcome, seq)
    return {"request_id": request.request_id, "status": outcome, "chunks": seq, "run": writer.run}


async def _report(writer: ReplyWriter, exc: Exception) -> None:
    """Best effort: put the error in the stream so that the reader need not wait for a timeout."""
    text = str(exc) if isinstance(exc, InferenceError) else f"{type(exc).__name__}: {exc}"
    with contextlib.suppress(Exception):
        if not writer.owned:
            await writer.take_over()
        if writer.owned:
            await writer.write("error", 0, text, timed_out=isinstance(exc, InferenceTimeout))
