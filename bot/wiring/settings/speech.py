"""The speech section: who listens to voice notes and audio, and the limits on what is listened to."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings

from bot.wiring.settings.common import http_url, section_config

MEGABYTE = 1024 * 1024


class SpeechSettings(BaseSettings):
    """Voice notes and audio files: transcribed by an OpenAI-compatible server (`openai`), by
    Whisper in this process (`local`, the [local] extra), or not at all (`none`: the bot says so)."""

    model_config = section_config()

    speech_backend: Literal["none", "openai", "local"] = "none"
    # openai: the API's base, ending in /v1 (http://localhost:8000/v1 for vLLM or speaches).
    speech_url: str | None = Field(default=None, validate_default=True)
    # openai: the served model's name (whisper-1, Systran/faster-whisper-small, …); local: a
    # Whisper's Hugging Face id or folder (openai/whisper-small).
    speech_model: str | None = Field(default=None, validate_default=True)
    speech_api_key: SecretStr | None = None
    speech_timeout_s: float = Field(default=60.0, gt=0)
    # verbose_json gives segments, so that what the model marks as no speech is dropped, and a
    # confidence; json (the text alone) for a server without it (OpenAI's gpt-4o-transcribe).
    speech_format: Literal["json", "verbose_json"] = "verbose_json"
    # The reply begins with what was heard (off: the person knows what they said).
    speech_echo: bool = False
    # Telegram's cloud Bot API hands bots files up to 20 MB; a local Bot API server allows 2 GB.
    audio_max_mb: float = Field(default=20.0, gt=0, le=2048)
    audio_max_seconds: float = Field(default=600.0, gt=0)
    # Longer recordings are heard by a job (kindred.media.hear_voice), with its steps shown,
    # rather than while the chat waits on a handler.
    audio_inline_seconds: float = Field(default=60.0, gt=0)

    @property
    def audio_max_bytes(self) -> int:
        return int(self.audio_max_mb * MEGABYTE)

    @field_validator("speech_url")
    @classmethod
    def _speech_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None:
            if info.data.get("speech_backend") == "openai":
                raise ValueError("is required when KINDRED_SPEECH_BACKEND=openai (the base, ending in /v1)")
            return None
        return http_url(value)

    @field_validator("speech_model")
    @classmethod
    def _speech_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None and info.data.get("speech_backend") in ("openai", "local"):
            raise ValueError("is required when KINDRED_SPEECH_BACKEND is openai or local (the model's name)")
        return value
