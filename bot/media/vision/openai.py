"""The ImageDescriber port over an OpenAI-compatible `POST {base}/chat/completions` with image
content parts (OpenAI, vLLM, Ollama's `/v1`, LocalAI, llama.cpp's server).

The image is read first (bot/media/images.py): checked within the limits, made small and written
anew without metadata; only then does anything leave the machine, as a `data:` URL in an
`image_url` part beside the person's caption. One request, not streamed; nothing else is asked of
the server. Whatever goes wrong (unreachable, a refused key, a model that cannot see, a 5xx, a
timeout, an answer that is not a completion) is a MediaError whose line a person may read; the
server's own words go to the log only, without the key.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx

from bot.core.errors import MediaError
from bot.core.media.models import MediaFile, Seen
from bot.media.images import ImageLimits, PreparedImage, prepare
from bot.media.remote import logged_detail, media_client

log = logging.getLogger(__name__)

# Enough for two or three sentences; the description is a memory line, not an essay.
MAX_TOKENS = 160
INSTRUCTION = (
    "A person sent this image to their companion, with the words given (if any). Describe what "
    "the image shows in one to three plain sentences: the main subject, the setting, and any "
    "text that can be read in it. Say only what is visible; do not answer or address the person."
)
NO_CAPTION = "(no words came with the image)"
UNREACHABLE = "I can't reach the vision service right now, so I couldn't look at that image."
TOO_SLOW = "The vision service didn't answer in time, so I couldn't look at that image."
BUSY = "The vision service is busy right now, so I couldn't look at that image."
GARBLED = "The vision service sent an answer I couldn't read, so I couldn't look at that image."
SAID_NOTHING = "The vision model said nothing about that image."
CANNOT_SEE = (
    "The model I use can't see images, so I couldn't look at that; an admin can set "
    "KINDRED_VISION_MODEL to a vision-capable one."
)
REFUSED_KEY = (
    "The vision service refused my key, so I couldn't look at that image; "
    "an admin should check KINDRED_VISION_API_KEY."
)


class OpenAIVision:
    """Descriptions from a vision-capable model on an OpenAI-compatible server. `base_url` ends in
    `/v1` (`http://127.0.0.1:11434/v1` for Ollama); `model` is the served model's name."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        limits: ImageLimits | None = None,
        timeout_s: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model_name = model
        self.base_url = base_url.rstrip("/")
        self.limits = limits or ImageLimits()
        self.timeout_s = timeout_s
        self._key = api_key or None
        self._client = media_client(api_key, timeout_s, transport)

    async def describe(self, image: MediaFile, caption: str) -> Seen:
        """What the image shows, in the model's words."""
        # Decoding and re-encoding are CPU work: a thread, so that other chats go on meanwhile.
        prepared = await asyncio.to_thread(prepare, image.data, self.limits)
        response = await self._post(self._body(prepared, caption))
        if response.status_code != 200:
            raise self._status_error(response)
        return Seen(_content(response, self.base_url), prepared.width, prepared.height)

    async def close(self) -> None:
        await self._client.aclose()

    def _body(self, prepared: PreparedImage, caption: str) -> dict[str, Any]:
        parts = [
            {"type": "text", "text": caption or NO_CAPTION},
            {"type": "image_url", "image_url": {"url": prepared.data_url}},
        ]
        return {
            "model": self.model_name,
            "messages": [{"role": "system", "content": INSTRUCTION}, {"role": "user", "content": parts}],
            "max_tokens": MAX_TOKENS,
            "temperature": 0.2,
            "stream": False,
        }

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        try:
            return await self._client.post(f"{self.base_url}/chat/completions", json=body)
        except httpx.TimeoutException:
            wait = self.timeout_s
            log.warning(
                "vision: %s did not answer within %g s (KINDRED_VISION_TIMEOUT_S)", self.base_url, wait
            )
            raise MediaError(TOO_SLOW) from None
        except httpx.HTTPError as exc:
            log.warning("vision: cannot reach %s: %s", self.base_url, type(exc).__name__)
            raise MediaError(UNREACHABLE) from None

    def _status_error(self, response: httpx.Response) -> MediaError:
        status = response.status_code
        detail = logged_detail(response, self._key)
        log.warning("vision: %s answered HTTP %s: %s", self.base_url, status, detail)
        if status in (401, 403):
            return MediaError(REFUSED_KEY)
        if status == 429:
            return MediaError(BUSY)
        if status in (400, 404, 415, 422):
            # A text-only model, or one not served: each server says so in its own words
            # ("image_url is only supported by certain models", "not a multimodal model").
            return MediaError(CANNOT_SEE)
        return MediaError(f"The vision service failed (HTTP {status}), so I couldn't look at that image.")


def _content(response: httpx.Response, server: str) -> str:
    """The first choice's text (a string, or a list of text parts as some servers send)."""
    try:
        content = response.json()["choices"][0]["message"]["content"]
        if isinstance(content, list):
            content = " ".join(str(part["text"]) for part in content if part.get("type") == "text")
        if not isinstance(content, str):
            raise TypeError("content is not text")
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        log.warning("vision: %s sent an answer that is not a chat completion", server)
        raise MediaError(GARBLED) from None
    text = " ".join(content.split())
    if not text:
        raise MediaError(SAID_NOTHING)
    return text
