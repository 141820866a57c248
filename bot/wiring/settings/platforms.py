"""The chat platforms' sections: Telegram and Discord."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from bot.wiring.settings.common import env_names, http_url, section_config


class TelegramSettings(BaseSettings):
    model_config = section_config("KINDRED_TELEGRAM_")

    bot_token: SecretStr | None = Field(default=None, validation_alias=env_names("TELEGRAM_BOT_TOKEN"))
    api_base_url: str = Field(
        default="https://api.telegram.org/bot",
        validation_alias=env_names("TELEGRAM_API_BASE_URL", "KINDRED_TELEGRAM_API_BASE_URL"),
    )
    webhook_url: str | None = Field(
        default=None, validation_alias=env_names("TELEGRAM_WEBHOOK_URL", "KINDRED_TELEGRAM_WEBHOOK_URL")
    )
    webhook_secret: SecretStr | None = Field(
        default=None, validation_alias=env_names("TELEGRAM_WEBHOOK_SECRET", "KINDRED_TELEGRAM_WEBHOOK_SECRET")
    )
    # In groups: answer when mentioned or replied to ("mention"), every message ("all"), or never.
    group_mode: Literal["mention", "all", "off"] = "mention"
    feedback_buttons: bool = True
    # Telegram asks bots to stay under about 30 messages a second overall; a local Bot API server
    # or a load test may allow more. With shared state, every replica together.
    sends_per_second: float = Field(default=30.0, gt=0)
    # A webhook post is answered when its update is handled, or after this long at most.
    webhook_answer_s: float = Field(default=8.0, gt=0, le=50)

    @field_validator("api_base_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        return http_url(value)

    @field_validator("webhook_url")
    @classmethod
    def _https_webhook(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith("https://"):
            raise ValueError("must be an https:// URL that Telegram can reach")
        return value


class DiscordSettings(BaseSettings):
    model_config = section_config("KINDRED_DISCORD_")

    bot_token: SecretStr | None = Field(default=None, validation_alias=env_names("DISCORD_BOT_TOKEN"))
    dev_guild_id: int | None = Field(
        default=None, validation_alias=env_names("DISCORD_DEV_GUILD_ID", "KINDRED_DISCORD_DEV_GUILD_ID")
    )
    feedback_buttons: bool = True
    # Privileged intent: read every message in servers. Off: DMs, mentions, replies and slash commands.
    message_content: bool = False
