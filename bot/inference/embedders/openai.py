"""The Embedder port over an OpenAI-compatible `POST {base}/embeddings` (Ollama, vLLM, llama.cpp's
server, hosted APIs): what a base install embeds with, since it has no torch to run MiniLM here.

Texts go in batches of `batch_size`, one request each, in order. Every answer is checked before a
vector reaches the store: one vector per text, each of the configured dimension, finite and not
zero, then scaled to unit length (servers differ on whether they normalise). Whatever goes wrong
(unreachable, a refused key, a 5xx, a timeout, a body that is not an embedding list) is an
InferenceError, InferenceTimeout for a timeout, with a one-line reason that never carries the key.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.models import Vector
from bot.inference.openai_wire import api_client

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 64
# How much of a server's error text goes into a message.
_DETAIL_CHARS = 200


class OpenAIEmbedder:
    """Unit float32 vectors from an OpenAI-compatible embeddings endpoint.

    `base_url` is the API's base as the settings give it, ending in `/v1` (`http://host:11434/v1`):
    requests go to `{base_url}/embeddings`. `model_name` is the served model's name, which the
    store records beside every vector, and `dim` the size every vector must have.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        dim: int,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        batch_size: int = DEFAULT_BATCH_SIZE,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if dim < 1 or batch_size < 1:
            raise ValueError("dim and batch_size must be at least 1")
        self.model_name = model
        self.dim = dim
        self.batch_size = batch_size
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self._key = api_key or None
        self._client = api_client(api_key, timeout_s, transport)

    @property
    def _where(self) -> str:
        return f"the embeddings server at {self.base_url}"

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One unit-length float32 vector per text, in order. No texts: no request at all."""
        vectors: list[Vector] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(await self._embed_batch(list(texts[start : start + self.batch_size])))
        return vectors

    async def close(self) -> None:
        await self._client.aclose()

    async def _embed_batch(self, texts: list[str]) -> list[Vector]:
        body = {"model": self.model_name, "input": texts, "encoding_format": "float"}
        try:
            response = await self._client.post(f"{self.base_url}/embeddings", json=body)
        except httpx.TimeoutException:
            raise InferenceTimeout(
                f"{self._where} did not answer within {self.timeout_s:g} s (KINDRED_EMBEDDING_TIMEOUT_S)"
            ) from None
        except httpx.HTTPError as exc:
            raise InferenceError(f"cannot reach {self._where}: {type(exc).__name__}") from None
        if response.status_code != 200:
            raise self._status_error(response)
        try:
            payload = response.json()
        except ValueError:
            raise InferenceError(f"{self._where} sent a body that is not JSON") from None
        return [self._unit(row) for row in self._rows(payload, len(texts))]

    def _rows(self, payload: Any, expected: int) -> list[Any]:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise InferenceError(f"{self._where} sent no embedding list (`data`)")
        if len(data) != expected:
            raise InferenceError(f"{self._where} sent {len(data)} embeddings for {expected} texts")
        # The API gives each item its input's index; a server may answer out of order.
        indexes = [item.get("index") for item in data]
        if all(isinstance(index, int) for index in indexes):
            if sorted(indexes) != list(range(expected)):
                raise InferenceError(f"{self._where} sent embeddings whose indexes do not match the texts")
            data = sorted(data, key=lambda item: int(item["index"]))
        return [item.get("embedding") for item in data]

    def _unit(self, row: Any) -> Vector:
        try:
            vector = np.asarray(row, dtype=np.float32)
        except (TypeError, ValueError):
            raise InferenceError(f"{self._where} sent an embedding that is not a list of numbers") from None
        if vector.ndim != 1:
            raise InferenceError(f"{self._where} sent an embedding that is not a list of numbers")
        if vector.shape[0] != self.dim:
            raise InferenceError(
                f"{self._where} sent {vector.shape[0]}-dimensional embeddings from model "
                f"{self.model_name!r}, but KINDRED_EMBEDDING_DIM is {self.dim}"
            )
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm) or norm == 0.0:
            raise InferenceError(f"{self._where} sent a zero or non-finite embedding")
        return vector / np.float32(norm)

    def _status_error(self, response: httpx.Response) -> InferenceError:
        status = response.status_code
        if status in (401, 403):
            return InferenceError(
                f"{self._where} refused the API key (HTTP {status}); check KINDRED_EMBEDDING_API_KEY"
            )
        if status == 404:
            return InferenceError(
                f"{self._where} does not serve /embeddings for model {self.model_name!r} (HTTP 404): "
                f"{self._detail(response)}; check KINDRED_EMBEDDING_URL (the base, ending in /v1) "
                "and KINDRED_EMBEDDING_MODEL"
            )
        if status == 429:
            return InferenceError(f"{self._where} is busy (HTTP 429): {self._detail(response)}")
        return InferenceError(f"{self._where} failed (HTTP {status}): {self._detail(response)}")

    def _detail(self, response: httpx.Response) -> str:
        try:
            payload = response.json()
            error = payload.get("error", payload) if isinstance(payload, dict) else payload
            message = error.get("message", error) if isinstance(error, dict) else error
            detail = str(message)
        except ValueError:
            detail = response.text.strip() or response.reason_phrase
        # A server may echo the request's headers in its error: the key never goes further.
        if self._key:
            detail = detail.replace(self._key, "***")
        return detail[:_DETAIL_CHARS]
