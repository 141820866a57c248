"""The tts section: the voice that says replies aloud to people who turned spoken replies on
(/voice on), and how much of a reply it says."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings

from bot.core.chat.spoken import MAX_SPOKEN_CHARS
from bot.wiring.settings.common import http_url, section_config


class TtsSettings(BaseSettings):
    """Spoken replies: an OpenAI-compatible `/v1/audio/speech` server (`openai`), Debian's
    espeak-ng on this machine (`espeak`), or none (`none`, the default: /voice on says so)."""

    model_config = section_config()

    tts_backend: Literal["none", "openai", "espeak"] = "none"
    # openai: the API's base, ending in /v1 (http://localhost:8000/v1 for speaches).
    tts_url: str | None = Field(default=None, validate_default=True)
    # openai: the served model's name (tts-1, gpt-4o-mini-tts, speaches-ai/Kokoro-82M-v1.0-ONNX, …).
    tts_model: str | None = Field(default=None, validate_default=True)
    # openai: the server's voice (alloy, af_heart, …); espeak: an espeak-ng voice (en, en-gb, de, …).
    tts_voice: str | None = None
    tts_api_key: SecretStr | None = None
    # opus: OGG/Opus, sent as it came once checked; wav, for a server without Opus (encoded here).
    tts_format: Literal["opus", "wav"] = "opus"
    tts_timeout_s: float = Field(default=60.0, gt=0)
    # The most of one reply that is said; the text reply always has all of it.
    tts_max_chars: int = Field(default=MAX_SPOKEN_CHARS, ge=50, le=4096)

    @field_validator("tts_url")
    @classmethod
    def _tts_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None:
            if info.data.get("tts_backend") == "openai":
                raise ValueError("is required when KINDRED_TTS_BACKEND=openai (the base, ending in /v1)")
            return None
        return http_url(value)

    @field_validator("tts_model")
    @classmethod
    def _tts_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None and info.data.get("tts_backend") == "openai":
            raise ValueError("is required when KINDRED_TTS_BACKEND=openai (the model's name)")
        return value

    @field_validator("tts_voice")
    @classmethod
    def _tts_voice(cls, value: str | None) -> str | None:
        return (value or "").strip() or None
