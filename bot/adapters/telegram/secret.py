"""The webhook secret Telegram sends with each update, when none is configured."""

from __future__ import annotations

import hashlib


def derived_webhook_secret(token: str) -> str:
    """Derived from the bot token, so that every replica agrees on it without being told."""
    return hashlib.sha256(b"kindred-telegram-webhook:" + token.encode()).hexdigest()
