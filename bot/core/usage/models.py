"""What a person used: one record per reply, voice note, image, proactive message or app build,
and the totals of one person (or group chat) on one day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

UsageKind = Literal["reply", "voice_seconds", "image", "proactive", "app_build"]
USAGE_KINDS: tuple[UsageKind, ...] = ("reply", "voice_seconds", "image", "proactive", "app_build")


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One use. `amount`: the samples a reply drew (n for best-of-n), the seconds of a voice note,
    the images read, the messages or builds. `group_id`: the group chat it came from, None for a
    private chat."""

    user_id: str
    kind: UsageKind
    at: datetime
    tokens_in: int = 0
    tokens_out: int = 0
    amount: float = 1.0
    group_id: str | None = None
    # The model that answered ('' for a use no model made) and what the use cost at its prices.
    model: str = ""
    cost: float = 0.0
    # The person's own day (their time zone where known); None: the UTC day of `at`.
    day: date | None = None


@dataclass(frozen=True, slots=True)
class UsageDay:
    """One person's use on one of their days (their time zone where known, else UTC), or, with
    `group`, one group chat's on one UTC day."""

    who: str
    day: date
    group: bool = False
    tokens_in: int = 0
    tokens_out: int = 0
    replies: int = 0
    voice_seconds: float = 0.0
    images: int = 0
    proactive: int = 0
    app_builds: int = 0
    cost: float = 0.0


@dataclass(frozen=True, slots=True)
class Spent:
    """Tokens (in and out together) and cost used in one budget period."""

    tokens: int = 0
    cost: float = 0.0
