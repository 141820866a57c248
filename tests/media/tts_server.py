"""A loopback OpenAI-compatible speech server (aiohttp): `POST /v1/audio/speech`.

It checks what it receives as a strict server would, and answers 400 when a check fails: a JSON
body with the `model` it serves, a `voice` it has, a non-empty `input` and a `response_format` it
knows. It answers real audio made with PyAV (tests/media/sounds.py): OGG/Opus for `opus`, WAV for
`wav`, a second per 40 characters. It records each request (`received`); a test queues failures
with `fail_next(kind)`, each for the next request only."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal

from aiohttp import web

from bot.media.tts.openai import OpenAIVoice
from tests.media import sounds

Failure = Literal["500", "stall", "garbage", "cut"]


@dataclass(frozen=True)
class Said:
    model: str
    voice: str
    input: str
    response_format: str
    authorization: str | None


@dataclass
class FakeVoiceServer:
    model: str = "tts-1"
    voices: tuple[str, ...] = ("alloy",)
    api_key: str | None = None
    received: list[Said] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    base_url: str = ""
    _failures: deque[Failure] = field(default_factory=deque)
    _release: asyncio.Event = field(default_factory=asyncio.Event)
    _runner: web.AppRunner | None = None

    def fail_next(self, kind: Failure, times: int = 1) -> None:
        self._failures.extend([kind] * times)

    async def start(self) -> FakeVoiceServer:
        app = web.Application()
        app.router.add_post("/v1/audio/speech", self._speak)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"
        return self

    async def close(self) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _speak(self, request: web.Request) -> web.Response:
        authorization = request.headers.get("Authorization")
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            return _error(401, f"Invalid API key: {authorization}")
        said = await self._checked(request)
        if isinstance(said, str):
            self.refused.append(said)
            return _error(400, said)
        self.received.append(said)
        failure = self._failures.popleft() if self._failures else None
        if failure == "500":
            return _error(500, f"CUDA out of memory (key {authorization})")
        if failure == "stall":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), timeout=30)
        if failure == "garbage":
            return web.Response(text="<html>Bad Gateway</html>", content_type="text/html")
        seconds = max(0.5, len(said.input) / 40)
        if said.response_format == "wav":
            return web.Response(body=sounds.sound(sounds.WAV, seconds), content_type="audio/wav")
        audio = sounds.sound(sounds.OGG_OPUS, seconds)
        if failure == "cut":
            audio = audio[: len(audio) // 3]
        return web.Response(body=audio, content_type="audio/ogg")

    async def _checked(self, request: web.Request) -> Said | str:
        if request.content_type != "application/json":
            return f"expected application/json, got {request.content_type}"
        body = await request.json()
        if not isinstance(body, dict):
            return "the body must be a JSON object"
        if body.get("model") != self.model:
            return f"model {body.get('model')!r} is not served here"
        if body.get("voice") not in self.voices:
            return f"voice {body.get('voice')!r} is not one of {self.voices}"
        if not isinstance(body.get("input"), str) or not body["input"].strip():
            return "input must be a non-empty string"
        if body.get("response_format", "mp3") not in ("opus", "wav"):
            return f"response_format {body.get('response_format')!r} is not supported here"
        return Said(
            body["model"],
            body["voice"],
            body["input"],
            body["response_format"],
            request.headers.get("Authorization"),
        )


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)


@contextlib.asynccontextmanager
async def speaking(
    response_format: Literal["opus", "wav"] = "opus",
    timeout_s: float = 5.0,
    api_key: str | None = None,
    voices: tuple[str, ...] = ("alloy",),
) -> AsyncIterator[tuple[FakeVoiceServer, OpenAIVoice]]:
    """A speech server that has `voices`, and the real voice pointed at it (alloy by default)."""
    server = await FakeVoiceServer(voices=voices, api_key=api_key).start()
    voice = OpenAIVoice(
        server.base_url, model="tts-1", voice="alloy", api_key=api_key, response_format=response_format,
        timeout_s=timeout_s,
    )  # fmt: skip
    try:
        yield server, voice
    finally:
        await voice.close()
        await server.close()
