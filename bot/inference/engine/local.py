"""In-process inference, on CPU or one GPU, batching requests that arrive together.

Two engines sit behind it. A plain Llama directory (the bundled SmolLM2 is one) runs on
`bot/inference/llama/` (`model.py`, a forward pass in torch alone, with `chat_tokenizer.py` and
`generate.py`): transformers is never imported, which takes seconds off every start. Any other model runs on
transformers' `generate` (`engine/rows.py` hooks), with peft for adapters. Both give the same tokens
(tests/inference/test_llama.py); `LocalInference.load(engine=...)` picks one by hand.

Each `stream` call puts a request in line (`batching.Batcher`). One worker thread takes what is
waiting and runs it as one left-padded batch, split back into a reply per request. Text
reaches the event loop through `loop.call_soon_threadsafe` into an asyncio.Queue, so the loop
never waits on the thread. Each row stops on its own: at its
max_tokens, when its consumer walks away, or at its deadline (InferenceTimeout). Rows may ask for
different LoRA adapters (`engine/lora.py`), run in one batch (peft's `adapter_names`, or
`llama/generate.py`'s own rows).

`sample` puts its n candidates in line together, so they are rows of one batch (up to
`max_batch`); the plain engine reads their shared prompt once. A seeded row draws from its own
generator (`sampling.Draws`), seeded from the request's seed and the candidate's index: its
tokens do not depend on the rows beside it, and `stream(seed=s)` writes what `sample(seed=s)`
writes as its first candidate.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bot.core.chat.quoting import break_markers, markers_of, template_messages
from bot.core.errors import ConfigError, InferenceError
from bot.core.models import ChatMessage, Sampled, StreamEnd
from bot.inference.engine.batching import Batcher, Request, row_seed
from bot.inference.engine.lora import AdapterSet, AdapterSlots, PeftSlots, find_adapter
from bot.inference.engine.threads import limit_torch_threads
from bot.inference.together import all_of

DEFAULT_MAX_CONTEXT = 2048
# Rows per generate. On CPU, throughput stops growing somewhere past 16 for SmolLM2-135M; a GPU
# takes more (see bench/inference.py).
DEFAULT_MAX_BATCH = 16
THREAD_NAME = "kindred-generate"
# "auto": the plain Llama engine where it computes the model exactly, transformers elsewhere.
Engine = Literal["auto", "llama", "transformers"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Sampling:
    """Sampling settings. temperature 0 means greedy decoding."""

    temperature: float = 0.7
    top_p: float = 0.9
    repetition_penalty: float = 1.1
    top_k: int = 50  # transformers' default, kept so replies read as they did before batching


@dataclass(frozen=True, slots=True)
class _Prepared:
    request: Request
    ids: list[int]
    adapter: str  # the internal name of the row's adapter, or lora.BASE


class LocalInference:
    """The Inference port over a causal LM and its chat template: a transformers model, or a
    `llama.LlamaModel` with a `chat_tokenizer.ChatTokenizer`."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        device: str = "cpu",
        timeout_s: float = 60.0,
        sampling: Sampling | None = None,
        max_context: int = DEFAULT_MAX_CONTEXT,
        max_batch: int = DEFAULT_MAX_BATCH,
        adapters_dir: Path | None = None,
    ) -> None:
        if not tokenizer.chat_template:
            raise ConfigError("KINDRED_MODEL: the model's tokenizer has no chat template")
        self._model = model
        self._tokenizer = tokenizer
        # A message that spells one of these must not become the token (core/chat/quoting.py).
        self._markers = markers_of(tokenizer.get_added_vocab())
        self._device = device
        self.timeout_s = timeout_s
        self.sampling = sampling or Sampling()
        self._plain = _is_plain_llama(model)
        self._slots: Any = _plain_slots(model) if self._plain else PeftSlots(model)
        if self._plain:
            self._limit = int(model.shape.max_positions)
        else:
            self._limit = int(getattr(model.config, "max_position_embeddings", max_context))
        self.context_window = min(self._limit, max_context)
        self._adapters = AdapterSet(adapters_dir, self._slots)
        self._batcher = Batcher(self._run_batch, max_batch=max_batch, thread_name=THREAD_NAME)

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
        max_batch: int = DEFAULT_MAX_BATCH,
        adapters_dir: Path | None = None,
        engine: Engine = "auto",
    ) -> LocalInference:
        """Load a model directory (or Hub id) prepared by `prepare_model`. Blocks for a while.

        `threads` sets torch's CPU threads for the whole process; see `limit_torch_threads`.
        `device="auto"`: the GPU when torch sees one, else the CPU. `engine` (see `Engine`):
        "llama" fails with ConfigError for a model the plain Llama engine cannot run.
        """
        import torch

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"

        limit_torch_threads(threads)
        path = Path(str(model_dir)).expanduser()
        loaded = None
        if engine != "transformers" and path.is_dir():
            from bot.inference.llama.generate import load_plain

            loaded = load_plain(path, device)
        if loaded is None and engine == "llama":
            raise ConfigError(f"KINDRED_MODEL: {str(model_dir)!r} is not a plain Llama directory")
        if loaded is None:
            from bot.inference.engine.rows import load_transformers

            loaded = load_transformers(str(model_dir), device)
        model, tokenizer = loaded
        return cls(
            model,
            tokenizer,
            device=device,
            timeout_s=timeout_s,
            sampling=sampling,
            max_context=max_context,
            max_batch=max_batch,
            adapters_dir=adapters_dir,
        )

    @property
    def engine(self) -> str:
        """Which engine runs the model: "llama" (torch alone) or "transformers"."""
        return "llama" if self._plain else "transformers"

    @property
    def dtype(self) -> Any:
        """The torch dtype of the model's weights."""
        return self._model.dtype

    @property
    def max_batch(self) -> int:
        return self._batcher.max_batch

    @property
    def loaded_adapters(self) -> list[str]:
        """The LoRA adapter names loaded now, least recently used first (for checks and tests)."""
        return self._adapters.loaded

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in the prompt, not counting the chat template's markers."""
        return len(self._tokenizer.encode(break_markers(text, self._markers), add_special_tokens=False))

    def render_prompt(self, messages: Sequence[ChatMessage]) -> str:
        """The exact prompt text the model sees, ending with the assistant's turn opening."""
        rendered = self._tokenizer.apply_chat_template(
            template_messages(messages, self._markers), add_generation_prompt=True, tokenize=False
        )
        return str(rendered)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        continue_from: str = "",
        ending: StreamEnd | None = None,
        seed: int | None = None,
        candidate: int = 0,
    ) -> AsyncGenerator[str, None]:
        """Yield the reply in text chunks as the model writes them.

        `adapter` names a LoRA adapter folder under the adapters directory; its newest version is
        used. `continue_from` is the reply's beginning, written before (by a worker that died):
        the model continues after it and only the new text is yielded. Raises InferenceError for
        an unknown adapter, and InferenceTimeout once `timeout_s` has passed since the call (time
        spent waiting for a batch counts). Closing or cancelling the iteration stops this
        request's row; the rest of its batch goes on. At the end, `ending.reason` says whether
        the model ended the reply ("stop") or its token budget did ("length"), as generated: the
        reply's text may re-tokenize to fewer tokens than the model wrote. `seed` fixes the
        draws: the reply is `sample(seed=seed)`'s candidate number `candidate` (a GPU worker
        serves each of a remote `sample`'s candidates as a stream of its own).
        """
        request = self._request(messages, max_tokens, adapter, seed, candidate, continue_from)
        self._batcher.submit(request)
        try:
            async for item in request.replies():
                yield item
        finally:
            request.cancel.set()
        if ending is not None:
            ending.reason = request.reason

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        """`n` whole replies to the same messages, sampled as rows of one batch (see the module
        docstring). Errors as `stream`; the first candidate to fail stops the others."""
        if n < 1:
            raise ValueError(f"n must be at least 1, not {n}")
        requests = [self._request(messages, max_tokens, adapter, seed, i) for i in range(n)]
        self._batcher.submit_all(requests)
        try:
            texts = await all_of(r.whole() for r in requests)
        finally:
            for request in requests:
                request.cancel.set()
        return [Sampled(text, r.reason == "length") for text, r in zip(texts, requests, strict=True)]

    def _request(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int,
        adapter: str | None,
        seed: int | None,
        index: int,
        prefix: str = "",
    ) -> Request:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        if adapter is not None:
            find_adapter(self._adapters.root, adapter)  # fail now, not after waiting in line
        return Request(
            prompt=template_messages(messages, self._markers),
            max_tokens=max_tokens,
            adapter=adapter,
            deadline=time.monotonic() + self.timeout_s,
            timeout_message=self._timeout_message(),
            loop=asyncio.get_running_loop(),
            queue=asyncio.Queue(),
            prefix=prefix,
            seed=None if seed is None else row_seed(seed, index),
        )

    async def close(self, timeout_s: float = 30.0) -> None:
        """Stop taking requests and wait for the batch in progress to end (see `Batcher.close`)."""
        if not await asyncio.to_thread(self._batcher.close, timeout_s):
            log.warning("the generation thread is still running after %g s", timeout_s)

    def _timeout_message(self) -> str:
        return (
            f"the local model did not finish its reply within {self.timeout_s:g} s "
            "(KINDRED_GENERATION_TIMEOUT_S)"
        )

    def _run_batch(self, requests: list[Request]) -> None:
        """Worker thread: run one batch; whatever goes wrong reaches every request as InferenceError."""
        try:
            prepared = [p for p in (self._prepare(r) for r in requests) if p is not None]
            # Between batches: unload adapters nobody asked for lately (a new name every night).
            self._adapters.trim({p.adapter for p in prepared})
            if prepared:
                self._generate(prepared)
        except Exception as exc:  # anything the model raises becomes one typed error
            error = (
                exc
                if isinstance(exc, InferenceError)
                else InferenceError(f"local generation failed: {type(exc).__name__}: {exc}")
            )
            error.__cause__ = exc
            for request in requests:
                request.post(error)

    def _prepare(self, request: Request) -> _Prepared | None:
        """Tokenize a request and find its adapter; a request that cannot run is told why here."""
        try:
            prompt = self._tokenizer.apply_chat_template(
                request.prompt, add_generation_prompt=True, tokenize=False
            )
            prompt += request.prefix
            ids = list(self._tokenizer(prompt, add_special_tokens=False)["input_ids"])
            if len(ids) >= self._limit:
                raise InferenceError(
                    f"the prompt takes {len(ids)} tokens; this model reads at most {self._limit}"
                )
            return _Prepared(request, ids, self._adapters.resolve(request.adapter))
        except InferenceError as exc:
            request.post(exc)
            return None

    def _generate(self, batch: list[_Prepared]) -> None:
        if self._plain:
            self._generate_plain(batch)
            return
        import torch
        from transformers import StoppingCriteriaList

        from bot.inference.engine import rows

        width = max(len(p.ids) for p in batch)
        pad_id = self._pad_token_id()
        input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, p in enumerate(batch):
            input_ids[i, width - len(p.ids) :] = torch.tensor(p.ids, dtype=torch.long)
            mask[i, width - len(p.ids) :] = 1
        row_list = [
            rows.Row(p.request, min(p.request.max_tokens, self._limit - len(p.ids)), width - len(p.ids))
            for p in batch
        ]
        from bot.inference.engine.sampling import Draws

        draws = Draws([p.request.seed for p in batch])
        options = rows.generate_options(self.sampling, [r.pad for r in row_list], draws)
        peft = self._slots.peft
        if peft is not None:
            options["adapter_names"] = [p.adapter for p in batch]
        model = self._model if peft is None else peft
        with torch.inference_mode():
            model.generate(
                input_ids=input_ids.to(self._device),
                attention_mask=mask.to(self._device),
                max_new_tokens=min(max(r.budget for r in row_list), self._limit - width),
                pad_token_id=pad_id,
                streamer=rows.RowStreamer(self._tokenizer, row_list, self._eos_ids()),
                stopping_criteria=StoppingCriteriaList([rows.RowStop(row_list, width)]),
                **options,
            )

    def _generate_plain(self, batch: list[_Prepared]) -> None:
        from bot.inference.engine.row_text import Row, RowText
        from bot.inference.engine.sampling import Draws
        from bot.inference.llama import generate as llama_generate

        rows = [Row(p.request, min(p.request.max_tokens, self._limit - len(p.ids)), 0) for p in batch]
        s = self.sampling
        llama_generate.generate(
            self._model,
            [p.ids for p in batch],
            [p.adapter for p in batch],
            self._slots,
            RowText(self._tokenizer, rows, self._eos_ids()),
            pad_id=self._pad_token_id(),
            max_new=min(max(r.budget for r in rows), self._limit - max(len(p.ids) for p in batch)),
            decoding=llama_generate.Decoding(s.temperature, s.top_k, s.top_p, s.repetition_penalty),
            draws=Draws([p.request.seed for p in batch]),
        )

    def _pad_token_id(self) -> int:
        pad = self._tokenizer.pad_token_id
        return int(self._tokenizer.eos_token_id if pad is None else pad)

    def _eos_ids(self) -> set[int]:
        found = {int(self._tokenizer.eos_token_id)}
        if self._plain:
            return found | set(self._model.eos_token_ids)
        configured = getattr(getattr(self._model, "generation_config", None), "eos_token_id", None)
        if isinstance(configured, int):
            found.add(configured)
        elif isinstance(configured, list):
            found.update(int(x) for x in configured)
        return found


def _is_plain_llama(model: Any) -> bool:
    from bot.inference.llama.model import LlamaModel

    return isinstance(model, LlamaModel)


def _plain_slots(model: Any) -> AdapterSlots:
    from bot.inference.llama.generate import TensorSlots

    return TensorSlots(model)
