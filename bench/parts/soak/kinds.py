"""What the bot's messages in bench/soak.py are, read from their text: the one vocabulary the
simulated people wait on and the checks count in."""

from __future__ import annotations

import re

from bench.parts.telegram.fixtures import REPLY_WORDS
from bot.core.chat.doubts import DOUBT_NOTICE
from bot.core.memory.controls import PRIVACY
from bot.core.miniapps.build import STEPS

REPLY_TEXT = " ".join(f"w{n}" for n in range(REPLY_WORDS))  # the load fixture's every reply
REPLY, APP, REMINDER_OK, RING, PRIVACY_KIND, REMINDERS, MEMORIES, SETTING, ERROR, STEP, DOUBT = (
    "reply", "app", "reminder_ok", "ring", "privacy", "reminders", "memories", "setting", "error", "app_step",
    "doubt",
)  # fmt: skip
# Not answers: a failure notice, an app build's progress that never became its link, or the notice
# that the last reply may not have arrived (core/chat/doubts.py), which comes before an answer.
NOT_ANSWERS = frozenset({RING, ERROR, STEP, DOUBT})
# The notices a failure shows in place of an answer (delivery.SORRY, the app build's, the store's).
_FAILURE_WORDS = ("went wrong", "right now", "try again", "couldn't", "can't start", "unavailable")


TAG = re.compile(r"^ ?(\[r\d+\])")  # the message a reply answers (bench/parts/soak/bot.py)


def has_notice(text: str | None) -> bool:
    """A reply's words followed by a notice (the store was unavailable: the turn is kept for later)."""
    return (text or "").startswith(REPLY_TEXT) and "\n\n" in (text or "")


def reply_tag(text: str | None) -> str | None:
    """The tag of the message a reply answers, or None (not a reply, or no tag)."""
    text = text or ""
    if not text.startswith(REPLY_TEXT):
        return None
    found = TAG.match(text[len(REPLY_TEXT) :])
    return found.group(1) if found else None


def kind_of(text: str | None) -> str:
    text = (text or "").strip()
    if text.startswith(REPLY_TEXT):
        return REPLY
    if "/a/" in text and ("is ready" in text or "already have" in text or "is updated" in text):
        return APP
    if text in STEPS.values():
        return STEP
    if text.startswith(DOUBT_NOTICE):
        return DOUBT
    if text.startswith("Reminder: "):
        return RING
    if text.startswith("Okay: ") and "I'll remind you" in text:
        return REMINDER_OK
    if text.startswith("Done: "):
        return SETTING
    if text.startswith(PRIVACY[:40]):
        return PRIVACY_KIND
    lowered = text.lower()
    if any(words in lowered for words in _FAILURE_WORDS):
        return ERROR
    if "reminder" in lowered:
        return REMINDERS
    return MEMORIES
