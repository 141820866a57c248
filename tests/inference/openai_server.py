"""A loopback OpenAI-compatible server (aiohttp) for the OpenAI backend's tests.

It streams `chunks` as chat.completion.chunk events, one event per chunk, honouring max_tokens
(one chunk counts as one token: finish_reason "length" once max_tokens ran out, else "stop"), and
serves `/v1/load_lora_adapter`, `/v1/models` and `/v1/embeddings` (HashEmbedder's vectors, listed
in reverse order with their indexes, as a server may). A request with `stream: false` gets a whole
completion after the time its chunks would take to stream (it stops early, counted in
`disconnects`, when the client leaves): `n` choices (one when `honour_n` is False, as Ollama does),
listed in reverse order with their indexes. With `label_choices`, each is the reply followed by
" #k" (k counts the choices served), so that every candidate is told apart. A test queues failures with
`fail_next(kind)` or `fail_next_embedding(kind)`; each applies to the next such request only, so a
test can check that the backend keeps working afterwards. It records request bodies and headers."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from tests.support.fakes import HashEmbedder

Failure = Literal[
    "500", "429", "stall", "drop", "malformed", "error_event", "no_done", "stall_first", "no_choices"
]
EmbeddingFailure = Literal["401", "500", "stall", "not_json", "wrong_dim", "too_few", "not_numbers"]


@dataclass
class FakeOpenAI:
    chunks: list[str] = field(default_factory=lambda: ["Hel", "lo", " there", ",", " friend", "!"])
    base_model: str = "smollm2"
    # Another reply for some model names (a LoRA adapter's), so that a test sees which one answered.
    chunks_by_model: dict[str, list[str]] = field(default_factory=dict)
    chunk_delay_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lora_loads: list[dict[str, Any]] = field(default_factory=list)
    served: set[str] = field(default_factory=set)
    disconnects: int = 0
    _failures: deque[Failure] = field(default_factory=deque)
    embedding_requests: list[dict[str, Any]] = field(default_factory=list)
    embedding_headers: list[dict[str, str]] = field(default_factory=list)
    _embedding_failures: deque[EmbeddingFailure] = field(default_factory=deque)
    _release: asyncio.Event = field(default_factory=asyncio.Event)
    _runner: web.AppRunner | None = None
    base_url: str = ""
    # Set: /v1/models refuses any other key with 401, as a server with --api-key does.
    api_key: str | None = None
    honour_n: bool = True
    label_choices: bool = True
    choices_served: int = 0
    # Whole completions being answered now, and the most at once: were the extra ones concurrent?
    in_flight: int = 0
    most_at_once: int = 0
    # A whole completion asked for with this seed is refused (HTTP 500): one of several fails.
    fail_seed: int | None = None
    # Set: the server reports `usage`, this many prompt tokens and a token per chunk written (every
    # choice's), on a whole completion always, on a stream only when `stream_options.include_usage`
    # asked for it (a last chunk with no choices, as OpenAI and vLLM send it). None: no usage at all.
    prompt_tokens: int | None = None

    def fail_next(self, kind: Failure) -> None:
        self._failures.append(kind)

    def fail_next_embedding(self, kind: EmbeddingFailure) -> None:
        self._embedding_failures.append(kind)

    async def start(self) -> FakeOpenAI:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/load_lora_adapter", self._load_lora)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/embeddings", self._embeddings)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _models(self, request: web.Request) -> web.Response:
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return web.json_response({"error": {"message": "Invalid API key"}}, status=401)
        models = [{"id": name, "object": "model"} for name in (self.base_model, *sorted(self.served))]
        return web.json_response({"object": "list", "data": models})

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.embedding_requests.append(body)
        self.embedding_headers.append(dict(request.headers))
        failure = self._embedding_failures.popleft() if self._embedding_failures else None
        if failure == "401":
            # As some servers do: the error echoes what it was sent.
            echoed = request.headers.get("Authorization", "")
            return web.json_response({"error": {"message": f"Invalid API key: {echoed}"}}, status=401)
        if failure == "500":
            return web.json_response({"error": {"message": "model crashed"}}, status=500)
        if failure == "stall":
            await self._stall()
        if failure == "not_json":
            return web.Response(text="<html>Bad Gateway</html>", content_type="text/html")
        hashed = HashEmbedder()
        rows = [hashed.vector(text).tolist() for text in body["input"]]
        if failure == "wrong_dim":
            rows = [[*row, 0.0] for row in rows]
        if failure == "too_few":
            rows = rows[:-1]
        if failure == "not_numbers":
            rows = [["a"] * len(row) for row in rows]
        data = [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)]
        return web.json_response({"object": "list", "data": data[::-1], "model": body["model"]})

    async def _load_lora(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.lora_loads.append(body)
        if body["lora_name"] in self.served and not body.get("load_inplace"):
            return web.json_response({"error": {"message": "already loaded"}}, status=400)
        self.served.add(body["lora_name"])
        return web.Response(text="Success: LoRA adapter added successfully.")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        failure = self._failures.popleft() if self._failures else None
        if failure == "500":
            return web.json_response({"error": {"message": "CUDA out of memory"}}, status=500)
        if failure == "429":
            return web.json_response(
                {"error": {"message": "too many requests"}}, status=429, headers={"Retry-After": "3"}
            )
        if failure == "stall_first":
            await self._stall()
        if body["model"] not in {self.base_model, *self.served}:
            message = f"The model `{body['model']}` does not exist."
            return web.json_response({"error": {"message": message}}, status=404)
        if body.get("stream") is False:
            return await self._whole(request, body, failure)
        return await self._stream(request, body, failure)

    async def _whole(self, request: web.Request, body: dict[str, Any], failure: str | None) -> web.Response:
        self.in_flight += 1
        self.most_at_once = max(self.most_at_once, self.in_flight)
        try:
            return await self._choices(request, body, failure)
        finally:
            self.in_flight -= 1

    async def _choices(self, request: web.Request, body: dict[str, Any], failure: str | None) -> web.Response:
        if body.get("seed") is not None and body.get("seed") == self.fail_seed:
            return web.json_response({"error": {"message": "this seed crashes"}}, status=500)
        if failure == "stall":
            await self._stall()
        if failure == "drop":
            assert request.transport is not None
            request.transport.close()
            return web.Response()  # never sent: the connection is gone
        if failure == "malformed":
            return web.Response(text="<html>Bad Gateway</html>", content_type="text/html")
        if failure == "error_event":
            return web.json_response({"error": {"message": "engine died"}})
        every = self.chunks_by_model.get(body["model"], self.chunks)
        finish = "length" if len(every) >= body["max_tokens"] else "stop"
        chunks = every[: body["max_tokens"]]
        for _ in chunks:
            await asyncio.sleep(self.chunk_delay_s)
            if request.transport is None or request.transport.is_closing():
                self.disconnects += 1
                return web.Response()  # nobody is listening
        choices = []
        for index in range(body.get("n", 1) if self.honour_n else 1):
            self.choices_served += 1
            label = f" #{self.choices_served}" if self.label_choices else ""
            message = {"role": "assistant", "content": "".join(chunks) + label}
            choices.append({"index": index, "message": message, "finish_reason": finish})
        if failure == "no_choices":
            choices = []
        answer: dict[str, Any] = {
            "object": "chat.completion",
            "model": body["model"],
            "choices": choices[::-1],
        }
        if self.prompt_tokens is not None:
            answer["usage"] = self._usage(len(chunks) * len(choices))
        return web.json_response(answer)

    def _usage(self, written: int) -> dict[str, int]:
        assert self.prompt_tokens is not None
        total = self.prompt_tokens + written
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": written, "total_tokens": total}

    async def _stream(
        self, request: web.Request, body: dict[str, Any], failure: str | None
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        every = self.chunks_by_model.get(body["model"], self.chunks)
        chunks = every[: body["max_tokens"]]
        # As vLLM says it: every token max_tokens allowed was text, so no end token came.
        finish = "length" if len(every) >= body["max_tokens"] else "stop"
        try:
            for index, chunk in enumerate(chunks):
                if index == 2 and failure is not None:
                    await self._fail_mid_stream(request, response, failure)
                    return response
                await response.write(event(chunk, body["model"]))
                await asyncio.sleep(self.chunk_delay_s)
            await response.write(event("", body["model"], finish=finish))
            if self.prompt_tokens is not None and (body.get("stream_options") or {}).get("include_usage"):
                usage = {"object": "chat.completion.chunk", "choices": [], "usage": self._usage(len(chunks))}
                await response.write(f"data: {json.dumps(usage)}\n\n".encode())
            if failure != "no_done":
                await response.write(b"data: [DONE]\n\n")
        except ConnectionResetError:
            self.disconnects += 1
        return response

    async def _fail_mid_stream(
        self, request: web.Request, response: web.StreamResponse, failure: str
    ) -> None:
        if failure == "stall":
            await self._stall()
        elif failure == "drop":
            assert request.transport is not None
            request.transport.close()
        elif failure == "malformed":
            await response.write(b"data: {this is not json\n\n")
        elif failure == "error_event":
            await response.write(b'data: {"error": {"message": "engine died"}}\n\n')
        elif failure == "no_done":
            pass  # the stream just ends: no finish_reason, no [DONE]

    async def _stall(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._release.wait(), timeout=30)


def event(text: str, model: str, *, finish: str | None = None) -> bytes:
    payload = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [{"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}],
    }
    return f"data: {json.dumps(payload)}\n\n".encode()
