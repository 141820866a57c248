"""The SpeechToText port over an OpenAI-compatible `POST {base}/audio/transcriptions` (OpenAI,
vLLM, speaches, LocalAI).

The recording is read first (bot/media/audio.py): checked whole and within the limits, sent as it
came when it is WAV, OGG/Opus or FLAC, else as 16 kHz mono WAV. Silence never leaves the machine.
The upload is one multipart body with a Content-Length (some servers refuse a chunked one) and
the fields `model` and `response_format`; nothing else is asked of the server. Whatever goes
wrong (unreachable, a refused key, a 5xx, a timeout, an answer that is not a transcription) is a
MediaError whose line a person may read; the server's own words go to the log only, without the key.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

import httpx

from bot.core.errors import MediaError
from bot.core.media.models import MediaFile, Transcript
from bot.media.audio import AudioLimits, PreparedAudio, prepare
from bot.media.remote import logged_detail, media_client
from bot.media.speech.answers import GARBLED, transcript

log = logging.getLogger(__name__)

ResponseFormat = Literal["json", "verbose_json"]
UNREACHABLE = "I can't reach the speech service right now, so I couldn't listen to that."
TOO_SLOW = "The speech service didn't answer in time, so I couldn't listen to that."
BUSY = "The speech service is busy right now, so I couldn't listen to that."
REFUSED_KEY = (
    "The speech service refused my key, so I couldn't listen to that; "
    "an admin should check KINDRED_SPEECH_API_KEY."
)


class OpenAISpeech:
    """Transcripts from an OpenAI-compatible speech server. `base_url` ends in `/v1`, as the
    settings give it (`http://host:8000/v1`); `model` is the served model's name."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        limits: AudioLimits | None = None,
        timeout_s: float = 60.0,
        response_format: ResponseFormat = "verbose_json",
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model_name = model
        self.base_url = base_url.rstrip("/")
        self.limits = limits or AudioLimits()
        self.timeout_s = timeout_s
        self.response_format = response_format
        self._key = api_key or None
        self._client = media_client(api_key, timeout_s, transport)

    async def transcribe(self, audio: MediaFile) -> Transcript:
        """What was said; an empty text for silence (then nothing was sent)."""
        # Decoding is CPU work: a thread, so that other chats go on meanwhile.
        prepared = await asyncio.to_thread(prepare, audio.data, self.limits)
        if prepared.silent:
            return Transcript("", prepared.duration_s)
        response = await self._post(prepared)
        if response.status_code != 200:
            raise self._status_error(response)
        try:
            payload = response.json()
        except ValueError:
            log.warning("speech: %s sent a body that is not JSON", self.base_url)
            raise MediaError(GARBLED) from None
        return transcript(payload, prepared.duration_s)

    async def close(self) -> None:
        await self._client.aclose()

    async def _post(self, prepared: PreparedAudio) -> httpx.Response:
        fields = {"model": self.model_name, "response_format": self.response_format}
        upload = {"file": (prepared.filename, prepared.data, prepared.mime)}
        try:
            # Bytes parts only: httpx sends the body whole, with its Content-Length.
            return await self._client.post(f"{self.base_url}/audio/transcriptions", data=fields, files=upload)
        except httpx.TimeoutException:
            log.warning(
                "speech: %s did not answer within %g s (KINDRED_SPEECH_TIMEOUT_S)",
                self.base_url,
                self.timeout_s,
            )
            raise MediaError(TOO_SLOW) from None
        except httpx.HTTPError as exc:
            log.warning("speech: cannot reach %s: %s", self.base_url, type(exc).__name__)
            raise MediaError(UNREACHABLE) from None

    def _status_error(self, response: httpx.Response) -> MediaError:
        status = response.status_code
        detail = logged_detail(response, self._key)
        log.warning("speech: %s answered HTTP %s: %s", self.base_url, status, detail)
        if status in (401, 403):
            return MediaError(REFUSED_KEY)
        if status == 429:
            return MediaError(BUSY)
        return MediaError(f"The speech service failed (HTTP {status}), so I couldn't listen to that.")
