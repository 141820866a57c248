"""What a failed Discord call tells about delivery: decided here, once, for every call Kindred makes.

- *Surely not delivered*: no connection was made (nothing was written), a 429 (discord.py waits
  out `retry_after` and tries again itself; `RateLimited` when it would not wait that long), or a
  4xx Discord answered before acting. Sending again cannot double anything.
- *Maybe delivered*: a 5xx (discord.py has already tried again, five times in all), a timeout, or a
  connection lost after the request was written. Discord may have acted. A message create that
  ends so is never sent again by Kindred itself (`reply.DiscordReply`): the delivery records its
  reply as of unknown delivery (`delivery.MaybeShown`, core/chat/doubts.py), as on Telegram; edits
  and deletes are idempotent and may be.
- *Gone*: 403 or 404, Discord refusing for good (no permission, the channel or message deleted,
  a person who blocked the bot).

Every create carries a `nonce` (`nonce_for`) with `enforce_nonce`, which discord.py sends unchanged
on each of its own tries, so Discord answers a repeated create with the first message instead of
posting it twice. docs/discord.md lists the rule per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator
from enum import StrEnum

import aiohttp
import discord

from bot.adapters.delivery import Gone, MaybeShown, NotShown

# How long one Discord call (with discord.py's own tries inside it) may take before Kindred gives up
# on it. aiohttp's own default is five minutes, long enough to hold a reply far past its turn.
REQUEST_TIMEOUT_S = 30.0
# Discord takes a nonce of at most 25 characters.
NONCE_CHARS = 25


# What a Discord call raises when it fails on the way (TimeoutError, asyncio.timeout's, is an OSError).
FAILURES = (discord.HTTPException, discord.RateLimited, aiohttp.ClientError, OSError)


class Verdict(StrEnum):
    NOT_DELIVERED = "surely not delivered"
    MAYBE_DELIVERED = "maybe delivered"
    GONE = "gone"


def verdict(exc: BaseException) -> Verdict:
    """What `exc`, raised by a Discord call, tells about whether Discord acted on it."""
    if isinstance(exc, discord.Forbidden | discord.NotFound):
        return Verdict.GONE
    if isinstance(exc, discord.DiscordServerError):
        return Verdict.MAYBE_DELIVERED
    if isinstance(exc, discord.HTTPException | discord.RateLimited):
        return Verdict.NOT_DELIVERED  # a 4xx (429 included): answered before acting
    if isinstance(exc, aiohttp.ClientConnectorError):
        return Verdict.NOT_DELIVERED  # no connection, so no request was written
    return Verdict.MAYBE_DELIVERED  # a timeout, a connection lost mid-call: it may have been acted on


def nonce_for(key: str, number: int) -> str:
    """The nonce of the `number`th message created for `key` (a reply's idempotency key): the same
    on every try, different for every message."""
    return hashlib.sha256(f"{key}#{number}".encode()).hexdigest()[:NONCE_CHARS]


def described(exc: BaseException) -> str:
    if isinstance(exc, discord.HTTPException):
        return f"Discord answered {exc.status}: {exc.text}"
    return f"no answer from Discord: {type(exc).__name__}"


@contextlib.asynccontextmanager
async def discord_call(timeout_s: float = REQUEST_TIMEOUT_S) -> AsyncIterator[None]:
    """Run one display call within `timeout_s`; its failure becomes `Gone`, `MaybeShown` or
    `NotShown` by its verdict."""
    try:
        async with asyncio.timeout(timeout_s):
            yield
    except FAILURES as exc:
        found = verdict(exc)
        if found is Verdict.GONE:
            raise Gone(described(exc)) from None
        if found is Verdict.MAYBE_DELIVERED:
            raise MaybeShown(described(exc)) from None
        raise NotShown(described(exc)) from None
