"""`KINDRED_INFERENCE_BACKEND=auto`: replies from GPU workers while one consumes the `gpu` queue,
from the local engine otherwise.

Each reply picks its engine when it starts and keeps it to the end, so a switch never breaks a
reply in flight: it only changes where the next one goes. Whether a GPU worker is there is asked
of Celery (`present`, blocking, a second or so) once when the backend is built, and again by the
first reply that finds the answer older than `recheck_s`: in a thread of its own, while that
reply goes where the last answer said, except when the last answer meant loading the local model
first, which is worth a fresh answer. A reply that found no worker to take it marks the answer
stale, so the next one asks again.

The local model is big: it is loaded by the first reply that needs it, once (`LoadOnce`), and it
stays loaded after a GPU worker appears, so that a worker's death later costs no second load.
Prompt tokens are counted with the remote side's tokenizer, which is the same model's
(`KINDRED_MODEL`) and is loaded at start without the weights.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncGenerator, Callable, Sequence

from bot.core.errors import InferenceTimeout
from bot.core.loading import LoadOnce
from bot.core.models import ChatMessage
from bot.core.ports import Inference

log = logging.getLogger(__name__)

NO_WORKER = "no inference worker answered"  # RemoteInference's timeout when nobody took a request


class AutoInference:
    """The Inference port over GPU workers or the local engine, whichever is there."""

    def __init__(
        self,
        remote: Inference,
        local: LoadOnce[Inference],
        present: Callable[[], bool],
        *,
        recheck_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._remote = remote
        self._local = local
        self.context_window = remote.context_window  # the same model's, wherever it runs
        self._present = present
        self.recheck_s = recheck_s
        self._clock = clock
        self._lock = threading.Lock()
        self._asking: threading.Thread | None = None
        self._remote_ok = False
        self._asked_at = float("-inf")
        self.refresh()

    def count_tokens(self, text: str) -> int:
        return self._remote.count_tokens(text)

    @property
    def chosen(self) -> str:
        """Where the next reply goes, by the latest answer: "celery" or "local"."""
        return "celery" if self._remote_ok else "local"

    def refresh(self) -> bool:
        """Ask Celery now (blocking) whether a GPU worker is there; log a change; return the answer."""
        try:
            found = self._present()
        except Exception as exc:  # the probe's own errors are JobError; anything else is the same news
            log.warning("inference auto: cannot ask the workers (%s); the local engine answers", exc)
            found = False
        with self._lock:
            changed = found != self._remote_ok or self._asked_at == float("-inf")
            self._remote_ok, self._asked_at = found, self._clock()
        if changed:
            where = "a GPU worker consumes the gpu queue: replies go to it (celery)"
            log.info("inference auto: %s", where if found else "no GPU worker: replies from the local engine")
        return found

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
    ) -> AsyncGenerator[str, None]:
        """The reply from the engine chosen now, to its end (see the module docstring)."""
        engine = await self._engine()
        try:
            async for chunk in engine.stream(messages, max_tokens=max_tokens, adapter=adapter):
                yield chunk
        except InferenceTimeout as exc:
            if engine is self._remote and NO_WORKER in str(exc):
                self._asked_at = float("-inf")  # the worker may be gone: the next reply asks again
            raise

    async def _engine(self) -> Inference:
        stale = self._clock() - self._asked_at >= self.recheck_s
        if stale and not self._remote_ok and not self._local.loaded:
            await asyncio.to_thread(self.refresh)  # a second's question before a model's load
        elif stale:
            self._ask_in_background()
        if self._remote_ok:
            return self._remote
        return await asyncio.to_thread(self._local.get)

    def _ask_in_background(self) -> None:
        with self._lock:
            if self._asking is not None and self._asking.is_alive():
                return
            self._asking = threading.Thread(target=self.refresh, name="inference-auto", daemon=True)
            self._asking.start()

    async def close(self) -> None:
        asking = self._asking
        if asking is not None:
            await asyncio.to_thread(asking.join, 10.0)
        for engine in (self._remote, self._local.peek()):
            close = getattr(engine, "close", None)
            if close is not None:
                await close()
