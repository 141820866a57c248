"""The Inference port over an OpenAI-compatible server (vLLM, Ollama, llama.cpp server).

Replies stream from `POST {base}/v1/chat/completions` with `stream: true` as server-sent events
(`data: {json}` lines, ending with `data: [DONE]`). A request for a LoRA adapter sends the
adapter's name as `model`, which is how vLLM serves several LoRA adapters on one base model.
With `load_lora`, a new version of an adapter folder is first registered with
`POST {base}/v1/load_lora_adapter` (`load_inplace` for a name the server already has).

Best-of-n (`sample`) asks for one whole completion (`stream: false`) with `n` choices; a server
that gives fewer (Ollama ignores `n`) is asked for the rest at once, one choice a request. A
`seed` goes to the server as its `seed` (OpenAI, vLLM and Ollama take one); what it repeats is
the server's promise.

The HTTP exchange runs in a task of its own under the reply's deadline and hands text to the
consumer through a queue: a consumer that walks away cancels it, which closes the connection.
HTTP statuses, timeouts and broken streams become InferenceError / InferenceTimeout here, once.
The API key goes only into the Authorization header; no message or log line carries it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bot.core.chat.quoting import template_messages
from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.models import ChatMessage, Sampled, StreamEnd
from bot.inference.engine.lora import find_adapter
from bot.inference.openai_wire import DONE, Delta, api_client, error_detail, parse_choices, parse_sse_line
from bot.inference.together import all_of

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 2048
# Without the model's tokenizer, count a token per 3 characters: English runs ~4 characters a
# token, so this over-counts, and a prompt fitted to the budget never overflows the server's.
CHARS_PER_TOKEN_ESTIMATE = 3


# The setting that holds the configured server's key; a models.toml entry names its own variable.
DEFAULT_KEY_SETTING = "KINDRED_OPENAI_API_KEY"


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
        key_setting: str = DEFAULT_KEY_SETTING,
    ) -> None:
        if load_lora and adapters_dir is None:
            raise ValueError("load_lora needs adapters_dir, where new adapter versions appear")
        self.base_url = api_root(base_url)
        self.model = model
        # Where the admin sets this server's key, for the refusal's message (never the key).
        self.key_setting = key_setting
        self.timeout_s = timeout_s
        self.context_window = context_window
        self.sampling = sampling or ServerSampling()
        self._count = count_tokens or estimate_tokens
        self._adapters_dir = adapters_dir
        self._load_lora = load_lora
        self._lora_root = (lora_root or str(adapters_dir)).rstrip("/")
        self._lora_versions: dict[str, str] = {}
        self._lora_lock = asyncio.Lock()
        self._client = api_client(
            api_key,
            timeout_s,
            transport,
            base_url=self.base_url,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
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
        seed: int | None = None,
    ) -> AsyncGenerator[str, None]:
        """Yield the reply in text chunks as the server streams them.

        Raises InferenceTimeout once `timeout_s` has passed since the call, and InferenceError
        for a refused request, a broken stream or an adapter that cannot be served. At the end,
        `ending.reason` is the server's `finish_reason` when it is "stop" or "length" (None for
        any other, such as "tool_calls", or none). `seed` is sent as the request's `seed`.
        """
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        queue: asyncio.Queue[str | BaseException | None] = asyncio.Queue()
        finish = StreamEnd()  # the producer's; handed on only once the consumer reaches the end
        body = self._body(messages, max_tokens, seed=seed)
        producer = loop.create_task(self._produce(body, adapter, deadline, queue, finish))
        try:
            while True:
                item = await queue.get()
                if item is None:
                    if ending is not None:
                        ending.reason = finish.reason
                        ending.tokens_in, ending.tokens_out = finish.tokens_in, finish.tokens_out
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            producer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await producer

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        """`n` whole replies: one completion asking for `n` choices with `seed`, then the choices
        the server fell short of, each asked for at once on its own (candidate i with `seed + i`).
        `timeout_s` covers them all; errors as `stream`, and an answer without choices is one."""
        if n < 1:
            raise ValueError(f"n must be at least 1, not {n}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        deadline = asyncio.get_running_loop().time() + self.timeout_s
        try:
            async with asyncio.timeout_at(deadline):
                model = await self._model_for(adapter)
                found = (await self._complete(self._body(messages, max_tokens, seed=seed, n=n), model))[:n]
                rest = [
                    self._complete(self._body(messages, max_tokens, seed=_plus(seed, i), n=1), model)
                    for i in range(len(found), n)
                ]
                found += [more[0] for more in await all_of(rest)]
        except (TimeoutError, httpx.TimeoutException):
            raise self._timeout() from None
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        return found

    async def _complete(self, body: dict[str, Any], model: str) -> list[Sampled]:
        response = await self._client.post("/v1/chat/completions", json={**body, "model": model})
        if response.status_code != 200:
            raise self._status_error(response, f"model {model!r}")
        return parse_choices(response, self.base_url)

    async def _produce(
        self,
        body: dict[str, Any],
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
                body = {**body, "model": model}
                async with self._client.stream("POST", "/v1/chat/completions", json=body) as response:
                    if response.status_code != 200:
                        await response.aread()
                        raise self._status_error(response, f"model {model!r}")
                    await self._relay(response, queue, ending)
            queue.put_nowait(None)
        except (TimeoutError, httpx.TimeoutException):
            queue.put_nowait(self._timeout())
        except InferenceError as exc:
            queue.put_nowait(exc)
        except httpx.HTTPError as exc:
            queue.put_nowait(self._transport_error(exc))

    def _body(
        self, messages: Sequence[ChatMessage], max_tokens: int, *, seed: int | None, n: int | None = None
    ) -> dict[str, Any]:
        """The request, less its `model`; `n` None: streamed, else whole with `n` choices."""
        body: dict[str, Any] = {
            # The server renders its own template: its markers are unknown here, so the shapes
            # templates give them are broken in every message (core/chat/quoting.py).
            "messages": template_messages(messages),
            "max_tokens": max_tokens,
            "stream": n is None,
            "temperature": self.sampling.temperature,
            "top_p": self.sampling.top_p,
        }
        if n is None:
            # The last chunk then carries the tokens the server counted (kindred usage).
            body["stream_options"] = {"include_usage": True}
        if n is not None and n > 1:
            body["n"] = n  # left out for one: a server that knows no `n` may refuse it
        if seed is not None:
            body["seed"] = seed
        return body

    async def _relay(
        self, response: httpx.Response, queue: asyncio.Queue[str | BaseException | None], ending: StreamEnd
    ) -> None:
        """Put the streamed text in `queue`; put in `ending` how the server said the reply ended and
        the tokens it counted (its last chunk's `usage`, asked for with `include_usage`)."""
        finished = False
        async for line in response.aiter_lines():
            event = parse_sse_line(line, self.base_url)
            if event is DONE:
                return
            if isinstance(event, Delta):
                if event.text:
                    queue.put_nowait(event.text)
                finished = finished or event.finished
                ending.reason = ending.reason or event.reason
                if event.usage is not None:
                    ending.tokens_in, ending.tokens_out = event.usage
        if not finished:
            raise InferenceError(
                f"the OpenAI-compatible server at {self.base_url} ended the stream before the reply was "
                "finished (no finish_reason, no [DONE])"
            )

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
        detail = error_detail(response)
        where = f"the OpenAI-compatible server at {self.base_url}"
        if status == 429:
            wait = response.headers.get("retry-after")
            after = f", retry after {wait} s" if wait else ""
            return InferenceError(f"{where} is busy (HTTP 429{after}): {detail}")
        if status in (401, 403):
            return InferenceError(f"{where} refused the API key (HTTP {status}); check {self.key_setting}")
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
    key_setting: str = DEFAULT_KEY_SETTING,
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
        raise InferenceError(f"{where} refused the API key (HTTP {status}); check {key_setting}")
    if status != 200:
        raise InferenceError(f"{where} failed on /v1/models (HTTP {status}): {error_detail(response)}")
    try:
        return [str(entry["id"]) for entry in response.json()["data"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise InferenceError(f"{where} sent no model list from /v1/models") from exc


def _plus(seed: int | None, index: int) -> int | None:
    return None if seed is None else seed + index
