"""What a failed Bot API call tells about delivery, and so whether it may be made again.

One rule, for every method (docs/telegram.md, "Failures and delivery"):

- *Surely not delivered*: the connection could not be made (refused, or no connection within the
  connect and pool timeouts) before a byte of the request was written; a 429 (`retry_after`); any
  other 4xx, which Telegram answers before acting. Trying again cannot repeat anything.
- *Maybe delivered*: the request was written, and then the answer was a 5xx, or it never came (a
  read timeout, a dropped connection). Telegram (or a proxy before it) may have acted.

A maybe-delivered call is made again only when making it twice shows the same as once
(`is_idempotent`): edits, drafts, reactions, answers to callbacks, deletes, chat actions and reads.
A send (`sendMessage`, `sendDocument`, any `send*` but drafts and chat actions, `copyMessage`,
`forwardMessage`) is never sent again automatically: the transport raises `MaybeDelivered`, and
the reply it carried is stored as "delivery unknown" (core/chat/doubts.py).
"""

from __future__ import annotations

from typing import Literal

from telegram.error import NetworkError

Verdict = Literal["not_delivered", "maybe_delivered"]

# send* methods that replace what they showed rather than adding a message.
_IDEMPOTENT_SENDS = frozenset({"sendmessagedraft", "sendchataction"})
_NON_IDEMPOTENT_PREFIXES = ("send", "copymessage", "forwardmessage")
# The long poll has its own loop (PTB's Updater): a retry here would only hold the next poll back.
# getMe is the start's first call: a Bot API that cannot be reached fails the start at once, and
# `kindred run` says so.
NOT_RETRIED = frozenset({"getupdates", "getme"})


class MaybeDelivered(NetworkError):
    """A non-idempotent call (a send) whose request was written and then failed (5xx, timeout,
    dropped connection): Telegram may have delivered it, so it is not made again."""


def method_of(url: str) -> str:
    """The Bot API method a request URL calls; Telegram matches names case-insensitively."""
    return url.rsplit("/", 1)[-1].lower()


def is_idempotent(method: str) -> bool:
    """Whether making `method` twice shows the same as making it once."""
    name = method.lower()
    return name in _IDEMPOTENT_SENDS or not name.startswith(_NON_IDEMPOTENT_PREFIXES)


def verdict_of_status(status: int) -> Verdict | None:
    """None for an answer that is no failure (2xx); 5xx: maybe delivered; other codes: not."""
    if status < 300:
        return None
    return "maybe_delivered" if status >= 500 else "not_delivered"


def may_retry(method: str, verdict: Verdict) -> bool:
    """Whether the transport may make the call again after a failure with this verdict. 4xx
    answers are left to PTB (its rate limiter waits out a 429), so a not-delivered verdict
    here is always a connection that never carried the request."""
    if method.lower() in NOT_RETRIED:
        return False
    return verdict == "not_delivered" or is_idempotent(method)
