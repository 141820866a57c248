"""Kindred in Telegram, through python-telegram-bot."""

from __future__ import annotations

from bot.adapters.base import Services
from bot.adapters.telegram.adapter import TelegramAdapter, TelegramConfig
from bot.adapters.telegram.chat import ChatPolicy
from bot.config import Settings


def build_telegram(settings: Settings, services: Services) -> TelegramAdapter:
    assert settings.telegram_bot_token is not None
    config = TelegramConfig(
        token=settings.telegram_bot_token.get_secret_value(),
        api_base_url=settings.telegram_api_base_url,
        webhook_url=settings.telegram_webhook_url,
        webhook_secret=(
            settings.telegram_webhook_secret.get_secret_value() if settings.telegram_webhook_secret else None
        ),
        chat=ChatPolicy(
            group_mode=settings.telegram_group_mode, feedback_buttons=settings.telegram_feedback_buttons
        ),
        sends_per_second=settings.telegram_sends_per_second,
    )
    return TelegramAdapter(config, services)


__all__ = ["TelegramAdapter", "TelegramConfig", "build_telegram"]
