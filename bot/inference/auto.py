"""`KINDRED_INFERENCE_BACKEND=auto`: replies from GPU workers while one consumes the `gpu` queue,
from the local engine otherwise.

Whether a GPU worker is there is asked of Celery (`present`: an inspect broadcast, a second or
so, blocking) when the backend is built, and again by the first reply that finds the answer
older than `recheck_s`, in a thread of its own while that reply goes where the last answer said.
An answer of "none" while replies go to the workers is asked once more before it is believed
(`confirm`), since a busy worker can be slow to answer. A reply whose engine must first load the
local model asks first, in line: a second is worth it before a model's load.

A switch never breaks a reply that has begun: each reply keeps its engine to the end. One sent
to the workers that no worker has started writing after `first_chunk_s` makes Celery be asked
again; if no worker is there any more, the request is withdrawn (its cancel key set, so a worker
that comes back drops it) and the reply comes from the local engine instead. So does one that
Redis refused ("busy"): no worker can be reached then. The person reads nothing twice: nothing
was shown yet. A reply that a worker began and then lost is the celery backend's (remote.py).

`sample` goes where the next reply would, whole: to the workers, or to the local engine when
Redis refuses (InferenceUnavailable). Its candidates cannot be withdrawn one by one the way a
stream can, so one that no worker takes waits for the celery backend's own limit.

The local model is big: it is loaded by the first reply that needs it, once (`LoadOnce`), and it
stays loaded after a GPU worker appears, so a worker's death later costs no second load. Prompt
tokens are counted with the remote side's tokenizer: the same model's (`KINDRED_MODEL`), loaded
at start without the weights.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence

from bot.core.chat.ports import Inference
from bot.core.errors import InferenceUnavailable
from bot.core.loading import LoadOnce
from bot.core.models import ChatMessage, Sampled, StreamEnd

log = logging.getLogger(__name__)

FIRST_CHUNK_S = 3.0
NEVER = float("-inf")


class AutoInference:
    """The Inference port over GPU workers or the local engine, whichever is there."""

    def __init__(
        self,
        remote: Inference,
        local: LoadOnce[Inference],
        present: Callable[[], bool],
        *,
        recheck_s: float,
        confirm: Callable[[], bool] | None = None,
        first_chunk_s: float = FIRST_CHUNK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._remote = remote
        self._local = local
        self._present = present
        self._confirm = confirm or present
        self.recheck_s = recheck_s
        self.first_chunk_s = first_chunk_s
        self.context_window = remote.context_window  # the same model's, wherever it runs
        self._clock = clock
        self._lock = threading.Lock()
        self._one_question = threading.Lock()  # replies that wait for an answer share one
        self._asking: threading.Thread | None = None
        self._remote_ok = False
        self._asked_at = NEVER
        self.refresh()

    def count_tokens(self, text: str) -> int:
        return self._remote.count_tokens(text)

    @property
    def chosen(self) -> str:
        """Where the next reply goes, by the latest answer: "celery" or "local"."""
        return "celery" if self._remote_ok else "local"

    def refresh(self) -> bool:
        """Ask Celery now (blocking) whether a GPU worker is there; log a change; return the answer."""
        found = self._ask(self._present)
        if not found and self._remote_ok:
            found = self._ask(self._confirm)
        with self._lock:
            changed = found != self._remote_ok or self._asked_at == NEVER
            self._remote_ok, self._asked_at = found, self._clock()
        if changed:
            where = "a GPU worker consumes the gpu queue: replies go to it (celery)"
            log.info("inference auto: %s", where if found else "no GPU worker: replies from the local engine")
        return found

    def answer_since(self, since: float) -> bool:
        """An answer given at `since` or later: the one another reply just got, or a new one."""
        with self._one_question:
            if self._asked_at >= since:
                return self._remote_ok
            return self.refresh()

    @staticmethod
    def _ask(present: Callable[[], bool]) -> bool:
        try:
            return present()
        except Exception as exc:  # the probe's own errors are JobError; anything else is the same news
            log.warning("inference auto: cannot ask the workers (%s); the local engine answers", exc)
            return False

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncGenerator[str, None]:
        """The reply from the engine chosen now, to its end (see the module docstring); the
        engine that wrote it says how it ended, into `ending`."""
        engine = await self._engine()
        if engine is self._remote:
            chunks = await self._from_workers(messages, max_tokens, adapter, ending, seed)
        else:
            chunks = engine.stream(messages, max_tokens=max_tokens, adapter=adapter, ending=ending, seed=seed)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await _close(chunks)

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        """The candidates from the engine chosen now (see the module docstring)."""
        engine = await self._engine()
        if engine is self._remote:
            try:
                return await engine.sample(messages, n=n, max_tokens=max_tokens, adapter=adapter, seed=seed)
            except InferenceUnavailable:
                await asyncio.to_thread(self.answer_since, self._clock())
                log.info("inference auto: candidates no worker could be asked for come from the local engine")
                engine = await asyncio.to_thread(self._local.get)
        return await engine.sample(messages, n=n, max_tokens=max_tokens, adapter=adapter, seed=seed)

    async def _engine(self) -> Inference:
        stale = self._clock() - self._asked_at >= self.recheck_s
        if stale and not self._remote_ok and not self._local.loaded:
            await asyncio.to_thread(self.answer_since, self._clock())
        elif stale:
            self._ask_in_background()
        if self._remote_ok:
            return self._remote
        return await asyncio.to_thread(self._local.get)

    async def _from_workers(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int,
        adapter: str | None,
        ending: StreamEnd | None,
        seed: int | None,
    ) -> AsyncIterator[str]:
        """The workers' reply, or the local engine's if none is there to start it (or Redis is
        away: no worker can be reached then). A withdrawn request never finishes, so only the
        engine that wrote the reply fills in `ending`."""
        replies = self._remote.stream(
            messages, max_tokens=max_tokens, adapter=adapter, ending=ending, seed=seed
        )
        first = asyncio.ensure_future(anext(replies))
        try:
            done, _ = await asyncio.wait({first}, timeout=self.first_chunk_s)
            unreachable = bool(done) and isinstance(first.exception(), InferenceUnavailable)
            withdraw = unreachable
            if not done:  # asked now; replies that wait at the same time share the question
                withdraw = not await asyncio.to_thread(self.answer_since, self._clock())
        except BaseException:  # the reader left while it waited
            await _cancel(first)
            await _close(replies)
            raise
        if not withdraw:
            return _then(first, replies)
        if unreachable:  # quick: Redis refuses at once, or times out in a second
            await asyncio.to_thread(self.answer_since, self._clock())
        await _cancel(first)
        await _close(replies)
        log.info("inference auto: a reply no worker started comes from the local engine instead")
        local = await asyncio.to_thread(self._local.get)
        return local.stream(messages, max_tokens=max_tokens, adapter=adapter, ending=ending, seed=seed)

    def _ask_in_background(self) -> None:
        with self._lock:
            if self._asking is not None and self._asking.is_alive():
                return
            since = self._clock()
            self._asking = threading.Thread(
                target=self.answer_since, args=(since,), name="inference-auto", daemon=True
            )
            self._asking.start()

    async def close(self) -> None:
        asking = self._asking
        if asking is not None:
            await asyncio.to_thread(asking.join, 10.0)
        for engine in (self._remote, self._local.peek()):
            close = getattr(engine, "close", None)
            if close is not None:
                await close()


async def _then(first: asyncio.Future[str], rest: AsyncIterator[str]) -> AsyncGenerator[str, None]:
    """The reply whose first chunk `first` is still coming (or has come), then the rest of it."""
    try:
        try:
            chunk = await first
        except StopAsyncIteration:
            return
        yield chunk
        async for chunk in rest:
            yield chunk
    finally:
        await _cancel(first)
        await _close(rest)


async def _cancel(pending: asyncio.Future[str]) -> None:
    if not pending.done():
        pending.cancel()
    with contextlib.suppress(BaseException):  # its outcome is nobody's now
        await pending


async def _close(chunks: AsyncIterator[str]) -> None:
    close = getattr(chunks, "aclose", None)  # every backend's stream is an async generator
    if close is not None:
        await close()
