"""In-process inference with transformers, on CPU or one GPU.

`generate` runs in a worker thread of its own. Text reaches the event loop through
`loop.call_soon_threadsafe` into an asyncio.Queue, so the loop never waits on a thread.
A stopping criterion checks the deadline and a cancel flag after every token: a reply that
runs too long raises InferenceTimeout, and a consumer that walks away stops the thread.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.errors import ConfigError, InferenceError, InferenceTimeout
from bot.core.models import ChatMessage

DEFAULT_MAX_CONTEXT = 2048
THREAD_NAME = "kindred-generate"
# How often a queued generation re-checks its deadline and cancel flag while another runs.
_LOCK_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class Sampling:
    """Sampling settings. temperature 0 means greedy decoding."""

    temperature: float = 0.7
    top_p: float = 0.9
    repetition_penalty: float = 1.1


@dataclass(slots=True)
class _Job:
    """One generation, shared between the event loop and its worker thread."""

    prompt: list[dict[str, str]]
    max_tokens: int
    deadline: float
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[str | BaseException | None]
    cancel: threading.Event = field(default_factory=threading.Event)
    timed_out: bool = False

    def post(self, item: str | BaseException | None) -> None:
        """Hand an item to the loop. None marks the end of the reply."""
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:
            self.cancel.set()  # the loop is closed: nobody is listening any more


class LocalInference:
    """The Inference port over a transformers causal LM and its chat template."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        device: str = "cpu",
        timeout_s: float = 60.0,
        sampling: Sampling | None = None,
        max_context: int = DEFAULT_MAX_CONTEXT,
    ) -> None:
        if not tokenizer.chat_template:
            raise ConfigError("KINDRED_MODEL: the model's tokenizer has no chat template")
        self._model = model
        self._tokenizer = tokenizer
        self._device = device
        self.timeout_s = timeout_s
        self.sampling = sampling or Sampling()
        self._limit = int(getattr(model.config, "max_position_embeddings", max_context))
        self.context_window = min(self._limit, max_context)
        self._lock = threading.Lock()  # one generate at a time per model

    @classmethod
    def load(
        cls,
        model_dir: str | Path,
        *,
        device: str = "cpu",
        timeout_s: float = 60.0,
        sampling: Sampling | None = None,
        max_context: int = DEFAULT_MAX_CONTEXT,
        threads: int | None = None,
    ) -> LocalInference:
        """Load a model directory (or Hub id) prepared by `prepare_model`. Blocks for a while.

        `threads` sets torch's CPU threads for the whole process; see `limit_torch_threads`.
        """
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        limit_torch_threads(threads)
        source = str(model_dir)
        local = Path(source).expanduser().is_dir()
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local)
            model = AutoModelForCausalLM.from_pretrained(source, local_files_only=local, dtype="auto")
        except (OSError, ValueError) as exc:
            raise ConfigError(f"KINDRED_MODEL: cannot load model {source!r}: {exc}") from exc
        model.to(torch.device(device))  # type: ignore[arg-type]
        model.eval()  # type: ignore[no-untyped-call]
        return cls(
            model,
            tokenizer,
            device=device,
            timeout_s=timeout_s,
            sampling=sampling,
            max_context=max_context,
        )

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in the prompt, not counting the chat template's markers."""
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def render_prompt(self, messages: Sequence[ChatMessage]) -> str:
        """The exact prompt text the model sees, ending with the assistant's turn opening."""
        rendered = self._tokenizer.apply_chat_template(
            _as_dicts(messages), add_generation_prompt=True, tokenize=False
        )
        return str(rendered)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
    ) -> AsyncGenerator[str, None]:
        """Yield the reply in text chunks as the model writes them.

        Raises InferenceTimeout once `timeout_s` has passed since the call (time spent waiting
        for another generation counts). Closing or cancelling the iteration stops the model.
        """
        if adapter is not None:
            raise InferenceError("LoRA adapters are not served by the local backend yet")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        loop = asyncio.get_running_loop()
        job = _Job(
            prompt=_as_dicts(messages),
            max_tokens=max_tokens,
            deadline=time.monotonic() + self.timeout_s,
            loop=loop,
            queue=asyncio.Queue(),
        )
        threading.Thread(target=self._run, args=(job,), name=THREAD_NAME).start()
        try:
            while True:
                remaining = job.deadline - time.monotonic()
                try:
                    item = await asyncio.wait_for(job.queue.get(), timeout=max(remaining, 0.0))
                except TimeoutError:
                    raise self._timeout() from None
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            job.cancel.set()

    def _timeout(self) -> InferenceTimeout:
        return InferenceTimeout(
            f"the local model did not finish its reply within {self.timeout_s:g} s "
            "(KINDRED_GENERATION_TIMEOUT_S)"
        )

    def _run(self, job: _Job) -> None:
        """Worker thread: wait for the model, generate, and report how it ended."""
        try:
            if not self._acquire(job):
                job.post(self._timeout() if job.timed_out else None)
                return
            try:
                self._generate(job)
            finally:
                self._lock.release()
            job.post(self._timeout() if job.timed_out else None)
        except InferenceError as exc:
            job.post(exc)
        except Exception as exc:  # anything the model raises becomes one typed error
            error = InferenceError(f"local generation failed: {type(exc).__name__}: {exc}")
            error.__cause__ = exc
            job.post(error)

    def _acquire(self, job: _Job) -> bool:
        while not self._lock.acquire(timeout=_LOCK_POLL_S):
            if job.cancel.is_set():
                return False
            if time.monotonic() >= job.deadline:
                job.timed_out = True
                return False
        return True

    def _generate(self, job: _Job) -> None:
        import torch
        from transformers import StoppingCriteriaList

        prompt = self._tokenizer.apply_chat_template(job.prompt, add_generation_prompt=True, tokenize=False)
        inputs = self._tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        prompt_len = int(inputs["input_ids"].shape[1])
        room = self._limit - prompt_len
        if room < 1:
            raise InferenceError(
                f"the prompt takes {prompt_len} tokens; this model reads at most {self._limit}"
            )
        sampling = self.sampling
        sample = sampling.temperature > 0
        options: dict[str, Any] = {"do_sample": sample}
        if sample:
            options.update(temperature=sampling.temperature, top_p=sampling.top_p)
        with torch.inference_mode():
            self._model.generate(
                input_ids=inputs["input_ids"].to(self._device),
                attention_mask=inputs["attention_mask"].to(self._device),
                max_new_tokens=min(job.max_tokens, room),
                repetition_penalty=sampling.repetition_penalty,
                pad_token_id=self._pad_token_id(),
                streamer=_make_streamer(self._tokenizer, job),
                stopping_criteria=StoppingCriteriaList([_make_stop(job)]),
                **options,
            )

    def _pad_token_id(self) -> int:
        pad = self._tokenizer.pad_token_id
        return int(self._tokenizer.eos_token_id if pad is None else pad)


def _as_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def _make_streamer(tokenizer: Any, job: _Job) -> Any:
    """A TextStreamer whose finished pieces go to the job's queue instead of stdout."""
    from transformers import TextStreamer

    class _QueueStreamer(TextStreamer):
        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            if text:
                job.post(text)

    return _QueueStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)


def _make_stop(job: _Job) -> Any:
    """Stop after the current token once the consumer has left or the deadline has passed."""
    import torch
    from transformers import StoppingCriteria

    class _DeadlineOrCancel(StoppingCriteria):
        def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
            if not job.cancel.is_set() and time.monotonic() >= job.deadline:
                job.timed_out = True
            stop = job.cancel.is_set() or job.timed_out
            batch = input_ids.shape[0]
            return torch.full((batch,), stop, dtype=torch.bool, device=input_ids.device)

    return _DeadlineOrCancel()


def limit_torch_threads(threads: int | None = None) -> int:
    """Set torch's intra-op threads (process-wide) and return the number in use.

    By default half the CPUs this process may run on (cgroup and affinity aware), at least one:
    the event loop, the embedder and the database need the rest. On a shared 2-core box, two
    OpenMP threads per small matmul ran 4-6x slower than one (measured under load).
    """
    import torch

    if threads is None:
        available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        threads = (available or os.cpu_count() or 1) // 2
    threads = max(threads, 1)
    if threads != torch.get_num_threads():
        torch.set_num_threads(threads)
    return threads
