"""Inference on a GPU worker: the chat side. `KINDRED_INFERENCE_BACKEND=celery`.

`stream` submits the job `kindred.inference.generate` (queue `gpu`) with a fresh request id, the
messages, max_tokens and the adapter's name (JSON only), then reads the reply from the Redis
Stream `kindred:reply:<request id>` with XREAD BLOCK, from the stream's very beginning: nothing a
worker wrote before the reader got there is lost (pub/sub would lose it). The wire format and
the worker are `reply_stream.py` and `serving.py`.

Exactly one reply, even when a worker dies mid-reply. The job is acknowledged late, so it is
delivered again; the new run takes the request over (an atomic ownership switch that fences the
old run out) and *continues* the reply after the chunks already in the stream, with those
chunks as the start of the assistant's turn. Chunks are numbered over the whole reply, so the
reader just goes on yielding chunk n+1: it never sees text twice, never has to take any back,
and what it yields is one reply (the dead run's beginning, the new run's end). A run that finds
the reply finished does nothing. The stored turn is written once by the conversation, under its
idempotency key.

Waiting: `wait_s` (KINDRED_INFERENCE_WAIT_S) for a worker to take the request (its `start`
entry), else InferenceTimeout "no inference worker answered within N s"; then `timeout_s`
(KINDRED_GENERATION_TIMEOUT_S) from the latest start for the reply to end. Walking away (closing
the iterator, a timeout, cancellation) sets `kindred:cancel:<id>`; the worker checks it with
every chunk it writes and stops generating. Redis unreachable is InferenceUnavailable:
"busy, try again shortly".

`sample` asks for its n candidates as n such replies at once, each with its candidate number (and
the seed), so each keeps the exactly-once guarantee above. A worker's engine batches the ones that
reach it within its gathering window (its threads take them from the queue about together), and
reads a prompt that rows of a batch share once; one that comes later runs in the next batch.
(One job for all n would need a wire format of n interleaved replies, and its own resumption.)

Prompt tokens are counted with the configured model's tokenizer; the weights stay on the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis

from bot.core.errors import InferenceError, InferenceTimeout, InferenceUnavailable, JobError, QueueUnavailable
from bot.core.jobs import Jobs
from bot.core.models import ChatMessage, Sampled, StreamEnd
from bot.inference.gpu_workers.reply_stream import DEFAULT_TTL_S, GENERATE_JOB, ReplyKeys, parse_entry
from bot.inference.together import all_of

log = logging.getLogger(__name__)

DEFAULT_MAX_CONTEXT = 2048  # as the local engine: the prompt budget, whatever the model allows
CONNECT_TIMEOUT_S = 2.0
# One XREAD waits at most this long, so that deadlines are checked and a dead socket is noticed.
READ_BLOCK_S = 2.0
READ_COUNT = 256
_UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, ConnectionError, OSError)


class RemoteInference:
    """The Inference port over Celery GPU workers, replies streamed back through Redis."""

    def __init__(
        self,
        jobs: Jobs,
        redis_url: str,
        *,
        count_tokens: Callable[[str], int],
        context_window: int,
        wait_s: float,
        timeout_s: float,
        ttl_s: int = DEFAULT_TTL_S,
    ) -> None:
        self._jobs = jobs
        self._redis_url = redis_url
        self._count_tokens = count_tokens
        self.context_window = context_window
        self.wait_s = wait_s
        self.timeout_s = timeout_s
        self.ttl_s = ttl_s

    @classmethod
    def connect(
        cls, jobs: Jobs, redis_url: str, model_dir: Path, *, wait_s: float, timeout_s: float
    ) -> RemoteInference:
        """Loads the model's tokenizer and config only (never its weights); contacts nothing."""
        from transformers import AutoConfig, AutoTokenizer

        local = model_dir.is_dir()
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=local)
        config = AutoConfig.from_pretrained(str(model_dir), local_files_only=local)
        limit = int(getattr(config, "max_position_embeddings", DEFAULT_MAX_CONTEXT))

        def count(text: str) -> int:
            return len(tokenizer.encode(text, add_special_tokens=False))

        return cls(
            jobs,
            redis_url,
            count_tokens=count,
            context_window=min(limit, DEFAULT_MAX_CONTEXT),
            wait_s=wait_s,
            timeout_s=timeout_s,
        )

    def count_tokens(self, text: str) -> int:
        return self._count_tokens(text)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
        candidate: int = 0,
    ) -> AsyncGenerator[str, None]:
        """Yield the reply's chunks as the worker writes them (see the module docstring). At the
        end, `ending.reason` is the one the worker's end entry carries (None from a worker too
        old to say). `seed` and `candidate` go to the worker's engine (`LocalInference.stream`)."""
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        keys = ReplyKeys(uuid.uuid4().hex)
        payload = {
            "request_id": keys.request_id,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
            "adapter": adapter,
            "seed": seed,
            "candidate": candidate,
            # A worker that takes the request later than this finds nobody waiting and drops it.
            "expires_at": time.time() + self.wait_s,
        }
        client = aioredis.Redis.from_url(
            self._redis_url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=READ_BLOCK_S + 5
        )
        finished = False
        try:
            await self._submit(payload)
            async with contextlib.aclosing(self._follow(client, keys, ending)) as chunks:
                async for chunk in chunks:
                    yield chunk
            finished = True
        except _UNREACHABLE as exc:
            log.warning("reply %s: Redis is unreachable (%s)", keys.request_id, type(exc).__name__)
            raise InferenceUnavailable() from None
        finally:
            if not finished:
                await self._cancel(client, keys)
            await client.aclose()

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        """`n` replies asked for at once, one request each (see the module docstring); the first
        to fail withdraws the others. Errors and time limits as `stream`, per reply."""
        if n < 1:
            raise ValueError(f"n must be at least 1, not {n}")

        async def one(candidate: int) -> Sampled:
            ending = StreamEnd()
            chunks = self.stream(
                messages,
                max_tokens=max_tokens,
                adapter=adapter,
                ending=ending,
                seed=seed,
                candidate=candidate,
            )
            async with contextlib.aclosing(chunks):
                text = "".join([chunk async for chunk in chunks])
            return Sampled(text, ending.reason == "length")

        return await all_of(one(i) for i in range(n))

    async def _submit(self, payload: dict[str, Any]) -> None:
        try:
            await asyncio.to_thread(self._jobs.submit, GENERATE_JOB, payload)
        except QueueUnavailable:
            raise InferenceUnavailable() from None
        except JobError as exc:
            raise InferenceError(f"the inference request was refused: {exc}") from exc

    async def _follow(
        self, client: aioredis.Redis, keys: ReplyKeys, ending: StreamEnd | None
    ) -> AsyncGenerator[str, None]:
        """The reply's chunks, each once, in order, until its end entry (its reason into `ending`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        answered = False
        last: bytes | str = "0-0"
        next_seq = 0
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise self._timeout(answered, keys)
            block_ms = max(1, int(min(remaining, READ_BLOCK_S) * 1000))
            found: Any = await client.xread({keys.stream: last}, count=READ_COUNT, block=block_ms)
            for _stream, entries in found or []:
                for entry_id, raw in entries:
                    last = entry_id
                    entry = parse_entry(raw)
                    if entry.kind == "start":
                        answered = True
                        deadline = loop.time() + self.timeout_s
                    elif entry.kind == "chunk":
                        if entry.seq > next_seq:
                            raise InferenceError(f"the reply skipped from chunk {next_seq} to {entry.seq}")
                        if entry.seq == next_seq:
                            next_seq += 1
                            yield entry.text
                    elif entry.kind == "end":
                        if ending is not None:
                            ending.reason = entry.reason
                        return
                    elif entry.timed_out:  # the worker's own limit: a timeout, as in every backend
                        raise InferenceTimeout(entry.text)
                    else:
                        raise InferenceError(entry.text or "the inference worker failed")

    def _timeout(self, answered: bool, keys: ReplyKeys) -> InferenceTimeout:
        if answered:
            return InferenceTimeout(
                f"the inference worker did not finish its reply within {self.timeout_s:g} s "
                "(KINDRED_GENERATION_TIMEOUT_S)"
            )
        log.warning(
            "reply %s: no inference worker took it within %g s (KINDRED_INFERENCE_WAIT_S); "
            "is `kindred worker --queues gpu` running?",
            keys.request_id,
            self.wait_s,
        )
        return InferenceTimeout(f"no inference worker answered within {self.wait_s:g} s")

    async def _cancel(self, client: aioredis.Redis, keys: ReplyKeys) -> None:
        """Tell the worker nobody reads any more. Best effort: Redis may be what failed."""
        with contextlib.suppress(Exception):
            await asyncio.shield(
                asyncio.wait_for(client.set(keys.cancel, "1", ex=self.ttl_s), CONNECT_TIMEOUT_S)
            )

    async def close(self) -> None:
        await self._jobs.close()
