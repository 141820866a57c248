"""Updates python-telegram-bot cannot read, taken out of a getUpdates answer before PTB parses it.

PTB parses a poll's batch as a whole (`Update.de_list`). One update it cannot read (a message
without `date`, a date that is not a number, a chat that is not an object) fails the batch; the
Updater logs the batch's raw data (people's words) at CRITICAL and polls the same offset again at
once, so it is stuck on that update forever, asking hundreds of times a second, and nothing after
it is handled. Here each update of the answer is read on its own first, and one that cannot be
read is replaced by its bare `update_id`: no handler matches that, and PTB confirms the id with
its next poll, so the updates after it are handled. The log names the id and the error, never
the text. Webhook posts are checked one by one already (`read_update` in adapter.py).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from telegram import Update

log = logging.getLogger(__name__)

# What json and PTB's de_json raise on a malformed update, here and in adapter.py's webhook reader.
# A date past time_t raises OverflowError or OSError (EOVERFLOW) from datetime.fromtimestamp.
UNREADABLE: tuple[type[Exception], ...] = (
    ValueError, TypeError, KeyError, AttributeError, RecursionError, OverflowError, OSError,
)  # fmt: skip


def readable_updates(body: bytes) -> bytes:
    """A getUpdates answer with every update PTB cannot read replaced by its bare update_id (one
    without an integer update_id is dropped: there is nothing to confirm). Anything that is not
    a successful answer with a list of updates is returned as it came, for PTB to report."""
    try:
        answer = json.loads(body)
    except ValueError:
        return body
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, list):
        return body
    kept: list[Any] = []
    for item in result:
        error = _unreadable(item)
        if error is None:
            kept.append(item)
            continue
        update_id = item.get("update_id") if isinstance(item, dict) else None
        if type(update_id) is int:
            kept.append({"update_id": update_id})
        log.warning("telegram: skipped update %s, which cannot be read (%s)", update_id, error)
    if len(kept) == len(result) and all(a is b for a, b in zip(kept, result, strict=True)):
        return body
    return json.dumps({**answer, "result": kept}).encode()


def _unreadable(item: object) -> str | None:
    """Why PTB cannot read this update (the error's type), or None when it can."""
    if not isinstance(item, dict) or type(item.get("update_id")) is not int:
        return "no integer update_id"
    try:
        Update.de_json(item, None)
    except UNREADABLE as exc:
        return type(exc).__name__
    return None
