"""Requests that arrive together run together: a waiting line and the one thread that serves it.

The event loop puts a `Request` in line and reads its reply from an asyncio.Queue. A worker
thread, started when the first request arrives and gone once the line is empty, takes everything
waiting (up to the batch size) and hands it to `run_batch` as one batch. Requests that arrive
while a batch runs form the next one. Before taking a batch it drops requests whose consumer has
left or whose deadline has passed, so a long line never runs work nobody waits for.

There is no torch here: `run_batch` is the model's part (see `LocalInference`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field

from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.models import EndReason

# After the first request wakes the thread, wait this long for the others of the same moment
# (a burst of chats is submitted from one event-loop turn, a few microseconds apart).
GATHER_S = 0.005

_SEED_BITS = 63

log = logging.getLogger(__name__)


def row_seed(seed: int, index: int) -> int:
    """The seed of candidate `index`'s draws for a request seeded with `seed`: mixed, so that
    (seed, 1) and (seed + 1, 0) draw unrelated numbers."""
    digest = hashlib.blake2b(f"{seed}:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - _SEED_BITS)


@dataclass(slots=True, eq=False)
class Request:
    """One reply, shared between the event loop and the generation thread."""

    prompt: list[dict[str, str]]
    max_tokens: int
    adapter: str | None
    deadline: float
    timeout_message: str
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[str | BaseException | None]
    cancel: threading.Event = field(default_factory=threading.Event)
    timed_out: bool = False
    # The reply's beginning, already written elsewhere: the model continues after it.
    prefix: str = ""
    # How the reply ended ("stop": the model's end token; "length": its token budget), set by the
    # generation thread just before it posts the end.
    reason: EndReason | None = None
    # The seed of this row's own draws (sampling.Draws); None: torch's global generator.
    seed: int | None = None

    def post(self, item: str | BaseException | None) -> None:
        """Hand an item to the loop. None marks the end of the reply."""
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:
            self.cancel.set()  # the loop is closed: nobody is listening any more

    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def timeout_error(self) -> InferenceTimeout:
        return InferenceTimeout(self.timeout_message)

    async def replies(self) -> AsyncGenerator[str, None]:
        """On the loop: the text as the generation thread posts it, until its end. Raises what
        it posts, and InferenceTimeout at the deadline."""
        while True:
            remaining = self.deadline - time.monotonic()
            try:
                item = await asyncio.wait_for(self.queue.get(), timeout=max(remaining, 0.0))
            except TimeoutError:
                raise self.timeout_error() from None
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    async def whole(self) -> str:
        """On the loop: the whole text (see `replies`)."""
        return "".join([chunk async for chunk in self.replies()])


class Batcher:
    """A waiting line served in batches by one thread that lives only while there is work."""

    def __init__(
        self,
        run_batch: Callable[[list[Request]], None],
        *,
        max_batch: int,
        thread_name: str,
        gather_s: float = GATHER_S,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, not {max_batch}")
        self.max_batch = max_batch
        self._run_batch = run_batch
        self._thread_name = thread_name
        self._gather_s = gather_s
        self._lock = threading.Lock()
        self._waiting: deque[Request] = deque()
        self._working = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(self, request: Request) -> None:
        """Put a request in line; start the worker thread if none is running."""
        self.submit_all([request])

    def submit_all(self, requests: list[Request]) -> None:
        """Put requests in line next to each other, so that they share a batch where it has room."""
        with self._lock:
            if self._closed:
                raise InferenceError("the local model is shut down")
            self._waiting.extend(requests)
            if self._working:
                return
            self._working = True
            self._thread = threading.Thread(target=self._work, name=self._thread_name, daemon=True)
            self._thread.start()

    def close(self, timeout_s: float) -> bool:
        """Refuse new requests, stop the waiting ones and wait up to `timeout_s` for the running
        batch to end. True when the thread is gone.

        Why wait: a daemon thread still inside torch when the interpreter exits is unwound by
        pthread_exit through C++ frames that forbid it, and the process aborts ("terminate called
        without an active exception") after all its work is done.
        """
        with self._lock:
            self._closed = True
            waiting, self._waiting = list(self._waiting), deque()
            thread = self._thread
        for request in waiting:
            request.cancel.set()
            request.post(InferenceError("the local model is shut down"))
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout_s)
        return not thread.is_alive()

    def waiting(self) -> int:
        with self._lock:
            return len(self._waiting)

    def _work(self) -> None:
        if self._gather_s > 0:
            time.sleep(self._gather_s)
        try:
            while batch := self._take():
                log.debug("generating a batch of %d", len(batch))
                self._run_batch(batch)
        except BaseException:
            # run_batch maps the model's errors itself; this is a bug's last line of defence,
            # so that the next request starts a new thread instead of waiting forever.
            with self._lock:
                self._working = False
            raise

    def _take(self) -> list[Request]:
        """The next batch; an empty list means the line is empty and this thread must end."""
        now = time.monotonic()
        batch: list[Request] = []
        expired: list[Request] = []
        with self._lock:
            while self._waiting and len(batch) < self.max_batch:
                request = self._waiting.popleft()
                if request.cancelled():
                    continue
                if now >= request.deadline:
                    expired.append(request)
                    continue
                batch.append(request)
            if not batch:
                self._working = False
        for request in expired:
            request.timed_out = True
            request.post(request.timeout_error())
        return batch
