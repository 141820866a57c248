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
# Answers to commands: reads, not stored turns, so one whose send may have landed is neither recorded
# nor offered again (the person repeats the command; docs/reliability.md).
COMMAND_ANSWERS = frozenset({APP, PRIVACY_KIND, REMINDERS, MEMORIES, SETTING})
# The notices a failure shows in place of an answer (delivery.SORRY, the app build's, the store's).
_FAILURE_WORDS = ("went wrong", "right now", "try again", "couldn't", "can't start", "unavailable")


# The message a reply answers, its first word (bench/parts/soak/bot.py).
TAG = re.compile(r"^(\[r\d+\]) ")


def _is_reply(text: str) -> bool:
    found = TAG.match(text)
    return text[found.end() if found else 0 :].startswith(REPLY_TEXT)


def has_notice(text: str | None) -> bool:
    """A reply's words followed by a notice (the store was unavailable: the turn is kept for later)."""
    return _is_reply(text or "") and "\n\n" in (text or "")


def reply_tag(text: str | None) -> str | None:
    """The tag of the message a reply answers, or None (not a reply, or no tag)."""
    text = (text or "").strip()
    found = TAG.match(text)
    return found.group(1) if found and _is_reply(text) else None


def kind_of(text: str | None) -> str:
    text = (text or "").strip()
    if text.startswith(DOUBT_NOTICE):  # first: it quotes a message of another kind
        return DOUBT
    if _is_reply(text):
        return REPLY
    if "/a/" in text and ("is ready" in text or "already have" in text or "is updated" in text):
        return APP
    if text in STEPS.values():
        return STEP
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
