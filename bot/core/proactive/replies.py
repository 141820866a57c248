"""What a reply to a proactive message says about it: a decline, an acceptance, or "never again".

Rules, no model: a reply within the reply window that is not a decline is an acceptance (the
issue's rule); a decline is a "no", a "stop", a "don't", a "not now"; "don't suggest this again"
(the footer's words, or close ones) also turns the trigger off for the person.
"""

from __future__ import annotations

import re
from datetime import datetime

from bot.core.proactive.models import SentRecord
from bot.core.proactive.policy import ProactivePolicy

_DONT_SUGGEST = re.compile(
    r"\b(?:don'?t|do not|never|stop)\s+(?:suggest|suggesting|offer|offering|ask|asking|send|sending)"
    r"(?:\s+(?:me\s+)?(?:this|that|these|those|it))?(?:\s+(?:again|anymore|any more))?\b"
    r"|\bunsubscribe\b|\bturn (?:this|these|it) off\b",
    re.IGNORECASE,
)
# "No problem", "no worries" and "why not" agree despite their "no"/"not"; they are read first.
_AGREEING = re.compile(r"\b(?:no problem|no worries|why not|not a bad idea|can't wait)\b", re.IGNORECASE)
_DECLINE = re.compile(
    r"^\s*(?:no|nope|nah|stop|later|pass|never)\b"
    r"|\b(?:no thanks|no thank you|not now|not today|not interested|not really|don'?t|do not|stop"
    r"|leave me alone|go away|rather not|i'?m good|i'?m fine|skip it|no need|busy)\b"
    r"|👎|🙅|❌",
    re.IGNORECASE,
)


def is_dont_suggest_again(text: str) -> bool:
    """Whether the reply asks never to get this kind of message again (turns its trigger off)."""
    return _DONT_SUGGEST.search(text) is not None


def is_decline(text: str) -> bool:
    """Whether the reply turns the offer down ("no thanks", "stop", "don't", "not now", 👎)."""
    if is_dont_suggest_again(text):
        return True
    return _DECLINE.search(text) is not None and _AGREEING.search(text) is None


def is_acceptance(text: str) -> bool:
    """Whether the reply takes the offer: any reply with words in it that is not a decline."""
    return bool(text.strip()) and not is_decline(text)


def outcome(record: SentRecord, reply: str, replied_at: datetime, policy: ProactivePolicy) -> bool | None:
    """The outcome a reply gives a sent message: True accepted, False declined, None not a reply to it."""
    if not record.at <= replied_at <= record.at + policy.reply_window:
        return None
    if is_decline(reply):
        return False
    return True if is_acceptance(reply) else None
