"""Signed, expiring links to a person's settings page.

A link names its person and chat and when it expires, signed with HMAC-SHA256 under a key derived
from a secret every replica already shares. Nothing is stored: any replica can check a link, and
a link cannot be revoked, only outlived, so it lives briefly (15 minutes by default). The token
is the only credential: the page acts for the person it names and for nobody else, whoever opens
it, and a link whose signature does not match, or that has expired, acts for nobody.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

LIFETIME = timedelta(minutes=15)
PATH = "/s/"
# A token is two base64url parts; a person's and a chat's key fit well within this.
MAX_TOKEN_CHARS = 600
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{8,540}\.[A-Za-z0-9_-]{43}$")
_LABEL = b"kindred-settings-link:"
EXPIRED = "expired"
INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class LinkClaim:
    """What a valid link says: whose settings, for which chat, until when."""

    person: str
    chat: str
    expires: datetime


def derived_key(secret: str) -> bytes:
    """The links' key, from a secret that serves something else too: a key of their own, so that
    nothing signed for one use is valid for the other."""
    return hmac.new(secret.encode("utf-8"), b"kindred settings links v1", hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SettingsLinks:
    def __init__(
        self,
        key: bytes,
        base_url: str,
        *,
        lifetime: timedelta = LIFETIME,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._key = key
        self.base_url = base_url.rstrip("/")
        self.lifetime = lifetime
        self._clock = clock

    @property
    def minutes(self) -> int:
        return max(1, round(self.lifetime.total_seconds() / 60))

    def token(self, person: str, chat: str) -> str:
        expires = int((self._clock() + self.lifetime).timestamp())
        claim = json.dumps({"p": person, "c": chat, "e": expires}, separators=(",", ":"), sort_keys=True)
        payload = _b64(claim.encode("utf-8"))
        return f"{payload}.{self._signature(payload)}"

    def link(self, person: str, chat: str) -> str:
        return f"{self.base_url}{PATH}{self.token(person, chat)}"

    def read(self, token: str) -> LinkClaim | str:
        """The link's claim, or why it acts for nobody: INVALID (not ours, altered, malformed)
        or EXPIRED. The signature is checked before anything in the token is read."""
        if len(token) > MAX_TOKEN_CHARS or not _TOKEN.match(token):
            return INVALID
        payload, signature = token.split(".")
        if not hmac.compare_digest(signature, self._signature(payload)):
            return INVALID
        try:
            claim = json.loads(_unb64(payload))
        except (ValueError, binascii.Error):
            return INVALID
        person, chat, expires = (claim.get(k) for k in "pce") if isinstance(claim, dict) else (None,) * 3
        if not (isinstance(person, str) and isinstance(chat, str) and type(expires) is int):
            return INVALID
        until = datetime.fromtimestamp(expires, UTC)
        if self._clock() >= until:
            return EXPIRED
        return LinkClaim(person, chat, until)

    def _signature(self, payload: str) -> str:
        return _b64(hmac.new(self._key, _LABEL + payload.encode("ascii"), hashlib.sha256).digest())
