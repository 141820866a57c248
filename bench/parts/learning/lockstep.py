"""Concurrent chats that give the same result on every run: the simulation's rounds.

Two things made a run with free-running chats unrepeatable, whatever its seeds:
- **Batch mates change a reply.** The local engine left-pads each batch to its longest prompt, and
  a row's logits depend on that padding (attention sums over a wider span in another order): on
  SmolLM2-135M a prompt alone and the same prompt padded beside a longer one gave logits up to
  2.7e-5 apart (rows of equal width were bit for bit equal, whatever the batch size). That rarely
  moves a sampled token, but over a day of replies it does, and which prompts share a batch
  depends on when each chat's request arrives.
- **Turn ids follow the order replies are stored,** and the night's held-out split hashes the turn
  id, the training set is read in (time, id) order, and the canary's test enters replies in that
  order: replies stored as they finish give each run other ids.

A round fixes both. Every chat of the round sends its next message, one chat after the other, up
to the point where the model is asked (so people's turns are stored in chat order and each
embedding is computed alone); the model's calls are then put in line all at once, in chat order,
so the engine cuts them into the same batches every time (they are all waiting before its thread
takes the first one); and each chat gets its reply back only after the chat before it has stored
its reply and reacted, so replies are stored in chat order too. The people still chat
concurrently, as far as the engine sees: its batches are full of them.

`SimClock` gives each message, reply and reaction a time of its own from the simulation instead of
the wall clock, so that nothing depends on how long a step took.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from bot.core.chat.ports import Inference
from bot.core.models import ChatMessage, Sampled, StreamEnd

T = TypeVar("T")
# Which chat of the running round the current task is (None: outside a round).
_CHAT: contextvars.ContextVar[int | None] = contextvars.ContextVar("sim_chat", default=None)
_NOW: contextvars.ContextVar[datetime | None] = contextvars.ContextVar("sim_now", default=None)


class SimClock:
    """The conversation's clock: the time the simulation set for the task asking."""

    def __call__(self) -> datetime:
        return _NOW.get() or datetime.now(UTC)

    @staticmethod
    def set(moment: datetime) -> None:
        """From now on, in this task, the clock reads `moment`."""
        _NOW.set(moment)


@dataclass(slots=True, eq=False)
class _Call:
    chat: int
    run: Callable[[], Awaitable[Any]]
    released: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[Any] | None = None

    def start(self) -> None:
        self.task = asyncio.ensure_future(self.run())

    async def result(self) -> Any:
        await self.released.wait()
        assert self.task is not None  # released only once started
        return await self.task


class Lockstep:
    """The Inference port over another one, holding each call of a round until the round says."""

    def __init__(self, inner: Inference) -> None:
        self.inner = inner
        self.context_window = inner.context_window
        self._calls: list[_Call] | None = None  # the open round's, in the order they came
        self._asked: list[asyncio.Event] = []
        self._started = False

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        """The whole reply as one chunk, once the round hands it over."""
        inner_end = StreamEnd()

        async def whole() -> str:
            parts = self.inner.stream(
                messages, max_tokens=max_tokens, adapter=adapter, ending=inner_end, seed=seed
            )
            return "".join([chunk async for chunk in parts])

        text: str = await self._enlist(whole).result()
        if ending is not None:
            ending.reason = inner_end.reason
        if text:
            yield text

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        async def sampled() -> list[Sampled]:
            return await self.inner.sample(messages, n=n, max_tokens=max_tokens, adapter=adapter, seed=seed)

        found: list[Sampled] = await self._enlist(sampled).result()
        return found

    def _enlist(self, run: Callable[[], Awaitable[Any]]) -> _Call:
        chat = _CHAT.get()
        call = _Call(-1 if chat is None else chat, run)
        if self._calls is None or chat is None or self._started:
            # Outside a round, or a second call of a chat after the round started (the base
            # model answering after an adapter failed): it runs at once, in its chat's turn.
            call.start()
            call.released.set()
            return call
        self._calls.append(call)
        self._asked[chat].set()
        return call

    async def round(self, chats: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        """Run each chat's coroutine in lockstep (module docstring); their results in order."""
        if self._calls is not None:
            raise RuntimeError("one round at a time")
        self._calls, self._asked, self._started = [], [asyncio.Event() for _ in chats], False
        tasks: list[asyncio.Task[T]] = []
        calls: list[_Call] = []
        try:
            for index, chat in enumerate(chats):
                task = asyncio.get_running_loop().create_task(_as_chat(index, chat))
                tasks.append(task)
                asked = asyncio.ensure_future(self._asked[index].wait())
                await asyncio.wait({asked, task}, return_when=asyncio.FIRST_COMPLETED)
                asked.cancel()
            calls, self._started = list(self._calls), True
            for call in calls:  # one pass of the loop: every request is in line before any runs
                call.start()
            results = []
            for index, task in enumerate(tasks):
                for call in calls:
                    if call.chat == index:
                        call.released.set()
                results.append(await task)
            return results
        finally:
            for running in [*tasks, *(call.task for call in calls if call.task is not None)]:
                running.cancel()  # only after a failure: a finished task ignores it
            self._calls, self._asked, self._started = None, [], False


async def _as_chat(index: int, chat: Callable[[], Awaitable[T]]) -> T:
    _CHAT.set(index)
    return await chat()
