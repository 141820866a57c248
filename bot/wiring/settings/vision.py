"""The vision section: who looks at photos and images, and the limits on what is looked at."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from bot.wiring.settings.common import http_url, section_config

MEGABYTE = 1024 * 1024


class VisionSettings(BaseSettings):
    """Photos and images: described by a vision-capable model on an OpenAI-compatible server
    (`openai`), or not at all (`none`: the bot says so, and answers a caption as text).

    URL, model and key left unset are the chat's own (KINDRED_OPENAI_BASE_URL, KINDRED_OPENAI_MODEL,
    KINDRED_OPENAI_API_KEY), for a chat model that sees (bot/wiring/media/backends.py: load_vision)."""

    model_config = section_config()

    vision_backend: Literal["none", "openai"] = "none"
    # The API's base, ending in /v1 (http://127.0.0.1:11434/v1 for Ollama).
    vision_url: str | None = None
    # The served model's name, when it is not the chat model (llava:7b, gpt-4o-mini, …).
    vision_model: str | None = None
    vision_api_key: SecretStr | None = None
    vision_timeout_s: float = Field(default=60.0, gt=0)
    # Telegram's cloud Bot API hands bots files up to 20 MB.
    image_max_mb: float = Field(default=20.0, gt=0, le=2048)
    # Read from the header before any pixel is decoded: a decompression bomb costs nothing.
    image_max_megapixels: float = Field(default=50.0, gt=0, le=1000)
    # The longest side an image is sent at; larger ones are scaled down.
    image_max_side: int = Field(default=1536, ge=64, le=8192)

    @property
    def image_max_bytes(self) -> int:
        return int(self.image_max_mb * MEGABYTE)

    @field_validator("vision_url")
    @classmethod
    def _vision_url(cls, value: str | None) -> str | None:
        value = (value or "").strip() or None
        return http_url(value) if value is not None else None

    @field_validator("vision_model")
    @classmethod
    def _vision_model(cls, value: str | None) -> str | None:
        return (value or "").strip() or None
