"""Telegram's `initData`: who opened a mini-app inside Telegram, signed with the bot's token.

Telegram's algorithm (core.telegram.org/bots/webapps, "Validating data received via the Mini
App"): secret_key = HMAC_SHA256(key="WebAppData", msg=bot_token); data_check_string = every
received field but `hash`, as "key=value" lines sorted by key, joined by "\\n"; the data is
Telegram's when hex(HMAC_SHA256(key=secret_key, msg=data_check_string)) equals `hash`. The check
here compares in constant time and bounds `auth_date`'s age, so a captured initData stops working.

Only the derived secret key is kept, never the token, and no refusal names either.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl

MAX_INIT_DATA_CHARS = 4096
# A mini-app stays open for a while; a day bounds how long a captured initData can be replayed.
MAX_AGE = timedelta(days=1)
# Clocks differ a little; an auth_date further ahead than this is not believed.
FUTURE_SKEW = timedelta(minutes=5)
OWNER_PREFIX = "telegram:"  # as bot/adapters/telegram/ids.py keys a Telegram person


class InitDataRefused(ValueError):
    """initData that is not Telegram's, or no longer fresh. The message is safe to show."""


@dataclass(frozen=True, slots=True)
class TelegramOpener:
    user_id: int
    auth_date: datetime

    @property
    def owner(self) -> str:
        return f"{OWNER_PREFIX}{self.user_id}"


def secret_key(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def signed_hash(fields: dict[str, str], key: bytes) -> str:
    """The hex HMAC that Telegram puts in `hash` for `fields` (every field but `hash`)."""
    check = "\n".join(f"{name}={value}" for name, value in sorted(fields.items()))
    return hmac.new(key, check.encode(), hashlib.sha256).hexdigest()


def verify_init_data(
    init_data: str, key: bytes, now: datetime, *, max_age: timedelta = MAX_AGE
) -> TelegramOpener:
    """The person who opened the app, when `init_data` is Telegram's and fresh; else InitDataRefused."""
    fields = _fields(init_data)
    received = fields.pop("hash", "")
    if not received:
        raise InitDataRefused("Telegram's initData has no hash")
    if not hmac.compare_digest(signed_hash(fields, key).encode(), received.encode()):
        raise InitDataRefused("Telegram's initData does not match its signature")
    try:
        auth_date = datetime.fromtimestamp(int(fields.get("auth_date", "")), UTC)
    except (ValueError, OverflowError, OSError):
        raise InitDataRefused("Telegram's initData has no valid auth_date") from None
    if now - auth_date > max_age or auth_date - now > FUTURE_SKEW:
        raise InitDataRefused("Telegram's initData is too old: reopen the app from the chat")
    return TelegramOpener(_user_id(fields.get("user", "")), auth_date)


def _fields(init_data: str) -> dict[str, str]:
    if not init_data or len(init_data) > MAX_INIT_DATA_CHARS:
        raise InitDataRefused("this is not Telegram's initData")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True, errors="strict")
    except (ValueError, UnicodeDecodeError):
        raise InitDataRefused("this is not Telegram's initData") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise InitDataRefused("Telegram's initData repeats a field")
    return fields


def _user_id(user: str) -> int:
    try:
        found = json.loads(user)
    except ValueError:
        found = None
    user_id = found.get("id") if isinstance(found, dict) else None
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        raise InitDataRefused("Telegram's initData names no user")
    return user_id
