"""Kindred in Telegram, through python-telegram-bot. `adapter.TelegramAdapter` is the surface the
composition root builds from its own `TelegramConfig`; nothing is imported here, so that a
small module of this package (the webhook secret) loads without the SDK."""
