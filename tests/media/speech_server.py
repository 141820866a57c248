"""A loopback OpenAI-compatible speech server (aiohttp): `POST /v1/audio/transcriptions`.

It checks what it receives as a strict server would, and answers 400 when a check fails: a
multipart body sent whole (a Content-Length, never chunked), the `model` it serves, a
`response_format` it knows, and a `file` that PyAV decodes. It "hears" a recording by its pitch:
the dominant frequency, rounded to 10 Hz, picks the words in `phrases` (a tone it has no words for
is music: a segment marked as no speech, with the words Whisper is known to invent for it). It
records each request (`received`); a test queues failures with `fail_next(kind)`, each for the
next request only."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

import av
import numpy as np
from aiohttp import web

from bot.media.speech.openai import OpenAISpeech

Failure = Literal["500", "401", "stall", "garbage", "no_text"]
# What Whisper says over music or silence, which a no-speech segment must never store.
INVENTED = "Thanks for watching!"


@dataclass(frozen=True)
class Received:
    model: str
    response_format: str
    filename: str
    content_type: str
    container: str
    sample_rate: int
    seconds: float
    pitch_hz: int
    headers: dict[str, str]
    size: int


@dataclass
class FakeSpeech:
    model: str = "whisper-1"
    phrases: dict[int, str] = field(default_factory=dict)
    language: str | None = "en"
    api_key: str | None = None
    received: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    base_url: str = ""
    _failures: deque[Failure] = field(default_factory=deque)
    _release: asyncio.Event = field(default_factory=asyncio.Event)
    _runner: web.AppRunner | None = None

    def fail_next(self, kind: Failure) -> None:
        self._failures.append(kind)

    async def start(self) -> FakeSpeech:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def close(self) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _transcribe(self, request: web.Request) -> web.Response:
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, f"Invalid API key: {request.headers.get('Authorization', '')}")
        received = await self._checked(request)
        if isinstance(received, str):
            self.refused.append(received)
            return _error(400, received)
        self.received.append(received)
        failure = self._failures.popleft() if self._failures else None
        if failure == "500":
            return _error(500, "CUDA out of memory")
        if failure == "401":
            return _error(401, "Invalid API key")
        if failure == "stall":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), timeout=30)
        if failure == "garbage":
            return web.Response(text="<html>Bad Gateway</html>", content_type="text/html")
        if failure == "no_text":
            return web.json_response({"error": None, "segments": "later"})
        return web.json_response(self._answer(received))

    async def _checked(self, request: web.Request) -> Received | str:
        """What came, or why a strict server would refuse it."""
        if (
            request.headers.get("Transfer-Encoding", "").lower() == "chunked"
            or request.content_length is None
        ):
            return "the body must come with a Content-Length"
        if request.content_type != "multipart/form-data":
            return f"expected multipart/form-data, got {request.content_type}"
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return "no file"
        if form.get("model") != self.model:
            return f"model {form.get('model')!r} is not served here"
        if form.get("response_format") not in ("json", "verbose_json"):
            return f"response_format {form.get('response_format')!r} is not supported"
        data = upload.file.read()
        try:
            container, rate, samples = _decoded(data)
        except (av.FFmpegError, IndexError, ValueError) as exc:
            return f"the audio cannot be decoded: {type(exc).__name__}"
        return Received(
            str(form["model"]), str(form["response_format"]), upload.filename, upload.content_type,
            container, rate, len(samples) / rate, _pitch(samples, rate), dict(request.headers), len(data),
        )  # fmt: skip

    def _answer(self, received: Received) -> dict[str, Any]:
        words = self.phrases.get(received.pitch_hz)
        segment = {
            "id": 0, "start": 0.0, "end": round(received.seconds, 2), "text": f" {words or INVENTED}",
            "avg_logprob": -0.2 if words else -1.6, "no_speech_prob": 0.01 if words else 0.93,
        }  # fmt: skip
        text = f" {words or INVENTED}"
        if received.response_format == "json":
            return {"text": text}
        answer: dict[str, Any] = {"task": "transcribe", "duration": received.seconds, "text": text}
        answer["segments"] = [segment]
        if self.language is not None:
            answer["language"] = self.language
        return answer


def _decoded(data: bytes) -> tuple[str, int, np.ndarray]:
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        frames = [frame.to_ndarray().reshape(-1) for frame in container.decode(stream)]
        return container.format.name, stream.sample_rate, np.concatenate(frames).astype(np.float64)


def _pitch(samples: np.ndarray, rate: int) -> int:
    """The dominant frequency, rounded to 10 Hz."""
    spectrum = np.abs(np.fft.rfft(samples))
    return int(round(float(np.fft.rfftfreq(len(samples), 1 / rate)[int(np.argmax(spectrum[1:])) + 1]), -1))


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)


@contextlib.asynccontextmanager
async def listening(
    phrases: dict[int, str], model: str = "whisper-1"
) -> AsyncIterator[tuple[FakeSpeech, OpenAISpeech]]:
    """A speech server that hears `phrases`, and the real backend pointed at it."""
    server = await FakeSpeech(model=model, phrases=phrases).start()
    backend = OpenAISpeech(server.base_url, model=model, timeout_s=5.0)
    try:
        yield server, backend
    finally:
        await backend.close()
        await server.close()
