"""How Telegram's numeric ids become Kindred's platform-qualified keys."""

from __future__ import annotations

PLATFORM = "telegram"


def user_key(user_id: int) -> str:
    return f"{PLATFORM}:{user_id}"


def chat_key(chat_id: int) -> str:
    return f"{PLATFORM}:{chat_id}"


def place_key(chat_id: int) -> str:
    """A chat as an allowlist entry: everyone in it may talk."""
    return f"{PLATFORM}-chat:{chat_id}"
