"""The Inference port over an OpenAI-compatible server (vLLM, Ollama, llama.cpp server).

Replies stream from `POST {base}/v1/chat/completions` with `stream: true` as server-sent events
(`data: {json}` lines, ending with `data: [DONE]`). A request for a LoRA adapter sends the
adapter's name as `model`, which is how vLLM serves several LoRA adapters on one base model.
With `load_lora`, a new version of an adapter folder is first registered with
`POST {base}/v1/load_lora_adapter` (`load_inplace` for a name the server already has).

The HTTP exchange runs in a task of its own under the reply's deadline and hands text to the
consumer through a queue: a consumer that walks away cancels it, which closes the connection.
HTTP statuses, timeouts and broken streams become InferenceError / InferenceTimeout here, once.
The API key goes only into the Authorization header; no message or log line carries it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bot.core.chat.quoting import template_messages
from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.models import ChatMessage, EndReason, StreamEnd
from bot.inference.engine.lora import find_adapter

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 2048
CONNECT_TIMEOUT_S = 10.0
# Without the model's tokenizer, count a token per 3 characters: English runs ~4 characters a
# token, so this over-counts, and a prompt fitted to the budget never overflows the server's.
CHARS_PER_TOKEN_ESTIMATE = 3
# How much of a server's error text goes into a message.
_DETAIL_CHARS = 200
_DONE = object()


@dataclass(frozen=True, slots=True)
class ServerSampling:
    """What is sent with every request."""

    temperature: float = 0.7
    top_p: float = 0.9


def estimate_tokens(text: str) -> int:
    """A conservative token count for a model whose tokenizer is not at hand."""
    return math.ceil(len(text) / CHARS_PER_TOKEN_ESTIMATE)


def local_token_counter(model_dir: str | Path) -> Callable[[str], int]:
    """`count_tokens` from a local tokenizer (a model directory or a cached Hub id)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    return count


def api_root(base_url: str) -> str:
    """`http://host:8000`, `http://host:8000/` and `http://host:8000/v1` all mean the same server."""
    root = base_url.rstrip("/")
    return root.removesuffix("/v1")


class OpenAICompatInference:
    """Streams replies from an OpenAI-compatible chat completions endpoint."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        context_window: int = DEFAULT_CONTEXT_WINDOW,
        count_tokens: Callable[[str], int] | None = None,
        sampling: ServerSampling | None = None,
        adapters_dir: Path | None = None,
        load_lora: bool = False,
        lora_root: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if load_lora and adapters_dir is None:
            raise ValueError("load_lora needs adapters_dir, where new adapter versions appear")
        self.base_url = api_root(base_url)
        self.model = model
        self.timeout_s = timeout_s
        self.context_window = context_window
        self.sampling = sampling or ServerSampling()
        self._count = count_tokens or estimate_tokens
        self._adapters_dir = adapters_dir
        self._load_lora = load_lora
        self._lora_root = (lora_root or str(adapters_dir)).rstrip("/")
        self._lora_versions: dict[str, str] = {}
        self._lora_lock = asyncio.Lock()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s)),
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
            transport=transport,
        )

    def count_tokens(self, text: str) -> int:
        """Tokens by the configured local tokenizer, else the conservative estimate (chars / 3)."""
        return self._count(text)

    async def close(self) -> None:
        await self._client.aclose()

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
    ) -> AsyncGenerator[str, None]:
        """Yield the reply in text chunks as the server streams them.

        Raises InferenceTimeout once `timeout_s` has passed since the call, and InferenceError
        for a refused request, a broken stream or an adapter that cannot be served. At the end,
        `ending.reason` is the server's `finish_reason` when it is "stop" or "length" (None for
        any other, such as "tool_calls", or none).
        """
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        queue: asyncio.Queue[str | BaseException | None] = asyncio.Queue()
        finish = StreamEnd()  # the producer's; handed on only once the consumer reaches the end
        producer = loop.create_task(self._produce(messages, max_tokens, adapter, deadline, queue, finish))
        try:
            while True:
                item = await queue.get()
                if item is None:
                    if ending is not None:
                        ending.reason = finish.reason
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            producer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await producer

    async def _produce(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int,
        adapter: str | None,
        deadline: float,
        queue: asyncio.Queue[str | BaseException | None],
        ending: StreamEnd,
    ) -> None:
        """The HTTP side of one reply: every outcome ends up in `queue` as text, an error or None
        (after the server's finish reason went into `ending`)."""
        try:
            async with asyncio.timeout_at(deadline):
                model = await self._model_for(adapter)
                body = self._body(messages, max_tokens, model)
                async with self._client.stream("POST", "/v1/chat/completions", json=body) as response:
                    if response.status_code != 200:
                        await response.aread()
                        raise self._status_error(response, f"model {model!r}")
                    ending.reason = await self._relay(response, queue)
            queue.put_nowait(None)
        except (TimeoutError, httpx.TimeoutException):
            queue.put_nowait(self._timeout())
        except InferenceError as exc:
            queue.put_nowait(exc)
        except httpx.HTTPError as exc:
            queue.put_nowait(self._transport_error(exc))

    def _body(self, messages: Sequence[ChatMessage], max_tokens: int, model: str) -> dict[str, Any]:
        return {
            "model": model,
            # The server renders its own template: its markers are unknown here, so the shapes
            # templates give them are broken in every message (core/chat/quoting.py).
            "messages": template_messages(messages),
            "max_tokens": max_tokens,
            "stream": True,
            "temperature": self.sampling.temperature,
            "top_p": self.sampling.top_p,
        }

    async def _relay(
        self, response: httpx.Response, queue: asyncio.Queue[str | BaseException | None]
    ) -> EndReason | None:
        """Put the streamed text in `queue`; return how the server said the reply ended."""
        finished = False
        reason: EndReason | None = None
        async for line in response.aiter_lines():
            event = parse_sse_line(line, self.base_url)
            if event is _DONE:
                return reason
            if isinstance(event, _Delta):
                if event.text:
                    queue.put_nowait(event.text)
                finished = finished or event.finished
                reason = reason or event.reason
        if not finished:
            raise InferenceError(
                f"the OpenAI-compatible server at {self.base_url} ended the stream before the reply was "
                "finished (no finish_reason, no [DONE])"
            )
        return reason

    async def _model_for(self, adapter: str | None) -> str:
        """The `model` to send: the base model, or the adapter's name (registered first if new)."""
        if adapter is None:
            return self.model
        if not self._load_lora:
            return adapter
        found = find_adapter(self._adapters_dir, adapter)
        async with self._lora_lock:  # one registration per new version, however many requests wait
            known = self._lora_versions.get(adapter)
            if known != found.version:
                await self._register(adapter, inplace=known is not None)
                self._lora_versions[adapter] = found.version
        return adapter

    async def _register(self, name: str, *, inplace: bool) -> None:
        body: dict[str, Any] = {"lora_name": name, "lora_path": f"{self._lora_root}/{name}"}
        if inplace:
            body["load_inplace"] = True  # vLLM: replace the weights under the same name
        response = await self._client.post("/v1/load_lora_adapter", json=body)
        if response.status_code != 200:
            raise self._status_error(response, f"loading LoRA adapter {name!r}")
        log.info("LoRA adapter %r registered with %s", name, self.base_url)

    def _timeout(self) -> InferenceTimeout:
        return InferenceTimeout(
            f"the OpenAI-compatible server at {self.base_url} did not finish its reply within "
            f"{self.timeout_s:g} s (KINDRED_GENERATION_TIMEOUT_S)"
        )

    def _status_error(self, response: httpx.Response, what: str) -> InferenceError:
        status = response.status_code
        detail = _error_detail(response)
        where = f"the OpenAI-compatible server at {self.base_url}"
        if status == 429:
            wait = response.headers.get("retry-after")
            after = f", retry after {wait} s" if wait else ""
            return InferenceError(f"{where} is busy (HTTP 429{after}): {detail}")
        if status in (401, 403):
            return InferenceError(
                f"{where} refused the API key (HTTP {status}); check KINDRED_OPENAI_API_KEY"
            )
        if status == 404:
            return InferenceError(f"{where} does not serve {what} (HTTP 404): {detail}")
        return InferenceError(f"{where} failed on {what} (HTTP {status}): {detail}")

    def _transport_error(self, exc: httpx.HTTPError) -> InferenceError:
        where = f"the OpenAI-compatible server at {self.base_url}"
        if isinstance(exc, httpx.ConnectError):
            error = InferenceError(f"cannot reach {where}: {exc}")
        elif isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
            error = InferenceError(f"{where} dropped the connection mid-reply: {exc}")
        else:
            error = InferenceError(f"{where}: {type(exc).__name__}: {exc}")
        error.__cause__ = exc
        return error


async def served_models(
    base_url: str,
    *,
    api_key: str | None = None,
    timeout_s: float = 3.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[str]:
    """The model names `GET {base}/v1/models` lists. Raises InferenceError with a one-line reason
    (unreachable, key refused, not a model list) that never carries the key."""
    root = api_root(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    where = f"the OpenAI-compatible server at {root}"
    client = httpx.AsyncClient(base_url=root, headers=headers, timeout=timeout_s, transport=transport)
    async with client:
        try:
            response = await client.get("/v1/models")
        except httpx.TimeoutException:
            raise InferenceError(f"{where} did not answer within {timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise InferenceError(f"cannot reach {where}: {type(exc).__name__}: {exc}") from None
    status = response.status_code
    if status in (401, 403):
        raise InferenceError(f"{where} refused the API key (HTTP {status}); check KINDRED_OPENAI_API_KEY")
    if status != 200:
        raise InferenceError(f"{where} failed on /v1/models (HTTP {status}): {_error_detail(response)}")
    try:
        return [str(entry["id"]) for entry in response.json()["data"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise InferenceError(f"{where} sent no model list from /v1/models") from exc


@dataclass(frozen=True, slots=True)
class _Delta:
    text: str
    finished: bool
    reason: EndReason | None = None  # the finish_reason, when it is one the port knows


def parse_sse_line(line: str, server: str) -> _Delta | object | None:
    """One line of the event stream: a text delta, _DONE, or None for lines that carry nothing.

    Raises InferenceError for a line that is not server-sent events, or an error event.
    """
    line = line.rstrip("\r")
    if not line or line.startswith(":"):
        return None  # event separator or comment (keep-alive)
    field, _, value = line.partition(":")
    value = value.removeprefix(" ")
    if field in ("event", "id", "retry"):
        return None
    if field != "data":
        raise InferenceError(
            f"the OpenAI-compatible server at {server} sent a malformed stream line: {line[:80]!r}"
        )
    if value.strip() == "[DONE]":
        return _DONE
    try:
        payload = json.loads(value)
        if "error" in payload:
            raise InferenceError(
                f"the OpenAI-compatible server at {server} failed mid-reply: {_message_of(payload)}"
            )
        choice = payload["choices"][0] if payload["choices"] else {}
        text = (choice.get("delta") or {}).get("content") or ""
        if not isinstance(text, str):
            raise TypeError("content is not text")
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise InferenceError(
            f"the OpenAI-compatible server at {server} sent a malformed stream line: {line[:80]!r}"
        ) from exc
    finish = choice.get("finish_reason")
    return _Delta(text, finish is not None, finish if finish in ("stop", "length") else None)


def _error_detail(response: httpx.Response) -> str:
    try:
        return _message_of(response.json())
    except ValueError:
        return response.text[:_DETAIL_CHARS].strip() or response.reason_phrase


def _message_of(payload: Any) -> str:
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    message = error.get("message", error) if isinstance(error, dict) else error
    return str(message)[:_DETAIL_CHARS]
