"""A loopback OpenAI-compatible vision server (aiohttp): `POST /v1/chat/completions` with image
content parts.

It checks what it receives as a strict server would, and answers 400 when a check fails: a JSON
body, the `model` it serves, a user message whose content holds a text part and an `image_url`
part with a base64 `data:` URL that Pillow decodes whole. It records each image it got
(`received`: its format, size, and every piece of metadata Pillow finds: EXIF, GPS, ICC, comments).
It "sees" an image by its colour: the mean colour's name is in the description ("a mostly red
picture"). `text_only`: a model that cannot see, answering 400 as OpenAI does. A test queues
failures with `fail_next(kind)`, each for the next request only."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web
from PIL import Image, ImageStat

from bot.media.images import ImageLimits
from bot.media.vision.openai import OpenAIVision

Failure = Literal["500", "401", "429", "stall", "garbage", "empty", "no_choices"]
COLOURS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220), "white": (245, 245, 245)}


@dataclass(frozen=True)
class Received:
    model: str
    caption: str
    mime: str
    format: str
    width: int
    height: int
    # Every piece of metadata the decoded image still carries: EXIF tags, and `info` keys.
    exif: dict[int, Any]
    info_keys: tuple[str, ...]
    raw: bytes
    headers: dict[str, str]


@dataclass
class FakeVision:
    model: str = "llava:7b"
    api_key: str | None = None
    text_only: bool = False
    received: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    base_url: str = ""
    _failures: deque[Failure] = field(default_factory=deque)
    _release: asyncio.Event = field(default_factory=asyncio.Event)
    _runner: web.AppRunner | None = None

    def fail_next(self, kind: Failure) -> None:
        self._failures.append(kind)

    async def start(self) -> FakeVision:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._complete)
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

    async def _complete(self, request: web.Request) -> web.Response:
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, f"Incorrect API key provided: {request.headers.get('Authorization', '')}")
        if self.text_only:
            return _error(400, "Invalid content type. image_url is only supported by certain models.")
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
        if failure == "429":
            return _error(429, "Rate limit reached")
        if failure == "stall":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), timeout=30)
        if failure == "garbage":
            return web.Response(text="<html>Bad Gateway</html>", content_type="text/html")
        if failure == "no_choices":
            return web.json_response({"object": "chat.completion", "choices": "later"})
        said = "" if failure == "empty" else seen(received)
        choice = {"index": 0, "message": {"role": "assistant", "content": said}, "finish_reason": "stop"}
        return web.json_response({"id": "chatcmpl-1", "object": "chat.completion", "choices": [choice]})

    async def _checked(self, request: web.Request) -> Received | str:
        """What came, or why a strict server would refuse it."""
        try:
            body = await request.json()
        except ValueError:
            return "the body is not JSON"
        if body.get("model") != self.model:
            return f"model {body.get('model')!r} is not served here"
        user = [m for m in body.get("messages", []) if m.get("role") == "user"]
        if len(user) != 1 or not isinstance(user[0].get("content"), list):
            return "expected one user message with content parts"
        parts = user[0]["content"]
        texts = [p["text"] for p in parts if p.get("type") == "text"]
        urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
        if len(urls) != 1 or not urls[0].startswith("data:image/") or ";base64," not in urls[0]:
            return "expected one image_url part with a base64 data: URL"
        head, encoded = urls[0].split(",", 1)
        try:
            raw = base64.b64decode(encoded, validate=True)
            with Image.open(io.BytesIO(raw)) as image:
                image.load()
                decoded = image.copy()
                fmt, exif = str(image.format), dict(image.getexif())
                info = tuple(sorted(str(key) for key in image.info))
        except (ValueError, OSError) as exc:
            return f"the image cannot be decoded: {type(exc).__name__}"
        return Received(
            str(body["model"]), " ".join(texts), head.removeprefix("data:").split(";")[0], fmt,
            decoded.width, decoded.height, exif, info, raw, dict(request.headers),
        )  # fmt: skip


def seen(received: Received) -> str:
    """What the fake model says of an image: the name of the colour nearest its mean."""
    with Image.open(io.BytesIO(received.raw)) as image:
        mean = ImageStat.Stat(image.convert("RGB")).mean
    name = min(COLOURS, key=lambda c: sum((a - b) ** 2 for a, b in zip(COLOURS[c], mean, strict=True)))
    return f"A mostly {name} picture, {received.width} by {received.height} pixels."


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)


@contextlib.asynccontextmanager
async def seeing(
    model: str = "llava:7b",
    *,
    text_only: bool = False,
    limits: ImageLimits | None = None,
    timeout_s: float = 5.0,
) -> AsyncIterator[tuple[FakeVision, OpenAIVision]]:
    """A vision server, and the real backend pointed at it."""
    server = await FakeVision(model=model, text_only=text_only).start()
    backend = OpenAIVision(server.base_url, model=model, limits=limits, timeout_s=timeout_s)
    try:
        yield server, backend
    finally:
        await backend.close()
        await server.close()
