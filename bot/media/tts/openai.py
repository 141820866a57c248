"""The SpeechSynthesis port over an OpenAI-compatible `POST {base}/audio/speech` (OpenAI,
speaches, LocalAI, Kokoro-FastAPI).

The request is JSON: `model`, `voice`, `input` and `response_format` (`opus`, which OpenAI sends
as OGG/Opus, or `wav` for a server without Opus). Whatever comes back is decoded and encoded again
as OGG/Opus (opus.py), so that a server's HTML error page or a cut file is never sent as a voice
note. Whatever goes wrong is a MediaError whose line a person may read; the server's own words go
to the log only, without the key.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

import httpx

from bot.core.errors import MediaError
from bot.core.media.models import Speech
from bot.media.remote import logged_detail, media_client
from bot.media.tts.opus import ogg_opus

log = logging.getLogger(__name__)

SpeechFormat = Literal["opus", "wav"]
UNREACHABLE = "I can't reach the voice service right now, so I couldn't say that aloud."
TOO_SLOW = "The voice service didn't answer in time, so I couldn't say that aloud."
REFUSED_KEY = (
    "The voice service refused my key, so I couldn't say that aloud; "
    "an admin should check KINDRED_TTS_API_KEY."
)
# An answer longer than this is not a reply of at most a few thousand characters.
MAX_SECONDS = 600.0


class OpenAIVoice:
    """Replies said by an OpenAI-compatible speech server. `base_url` ends in `/v1`
    (`http://host:8000/v1`); `model` and `voice` are the server's names (tts-1 and alloy)."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        voice: str,
        api_key: str | None = None,
        response_format: SpeechFormat = "opus",
        timeout_s: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model_name = model
        self.voice = voice
        self.base_url = base_url.rstrip("/")
        self.response_format = response_format
        self.timeout_s = timeout_s
        self._key = api_key or None
        self._client = media_client(api_key, timeout_s, transport)

    async def synthesize(self, text: str, voice: str | None = None) -> Speech:
        response = await self._post(text, voice or self.voice)
        if response.status_code != 200:
            raise self._status_error(response)
        # Decoding and encoding is CPU work: a thread, so that other chats go on meanwhile.
        try:
            return await asyncio.to_thread(ogg_opus, response.content, MAX_SECONDS)
        except MediaError:
            log.warning(
                "tts: %s sent a body that is not audio (%s)",
                self.base_url,
                response.headers.get("content-type"),
            )
            raise

    async def close(self) -> None:
        await self._client.aclose()

    async def _post(self, text: str, voice: str) -> httpx.Response:
        body = {
            "model": self.model_name,
            "voice": voice,
            "input": text,
            "response_format": self.response_format,
        }
        try:
            return await self._client.post(f"{self.base_url}/audio/speech", json=body)
        except httpx.TimeoutException:
            log.warning(
                "tts: %s did not answer within %g s (KINDRED_TTS_TIMEOUT_S)", self.base_url, self.timeout_s
            )
            raise MediaError(TOO_SLOW) from None
        except httpx.HTTPError as exc:
            log.warning("tts: cannot reach %s: %s", self.base_url, type(exc).__name__)
            raise MediaError(UNREACHABLE) from None

    def _status_error(self, response: httpx.Response) -> MediaError:
        status = response.status_code
        log.warning("tts: %s answered HTTP %s: %s", self.base_url, status, logged_detail(response, self._key))
        if status in (401, 403):
            return MediaError(REFUSED_KEY)
        return MediaError(f"The voice service failed (HTTP {status}), so I couldn't say that aloud.")
