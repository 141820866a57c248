"""Spoken replies: a person who turned them on (/voice on) gets each reply as text, as always,
then the same words as a voice note.

The choice is the person's, kept with them (TurnLog.set_spoken_replies) and forgotten with
/forget all; it is off by default, and needs a voice the admin configured (KINDRED_TTS_BACKEND).
The text reply is never held back or lost for the voice note: it is sent first, and a voice that
fails costs at most one short line. A long reply is said up to `max_chars` (its last whole
sentence within them), since a voice note of a page of text helps nobody.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from bot.core.chat.ports import TurnLog
from bot.core.errors import MediaError, StoreUnavailable
from bot.core.media.models import Speech
from bot.core.media.ports import SpeechSynthesis

log = logging.getLogger(__name__)

MAX_SPOKEN_CHARS = 1000
NO_BACKEND = (
    "I can't speak yet; an admin can turn on spoken replies with KINDRED_TTS_BACKEND=espeak "
    "(espeak-ng on the server) or KINDRED_TTS_BACKEND=openai (an OpenAI-compatible speech server)."
)
VOICE_ON = (
    "Done: from now on I send each reply as text and then as a voice note. "
    f"Long replies are spoken up to about {MAX_SPOKEN_CHARS:,} characters. /voice off stops that."
)
VOICE_OFF = "Done: from now on I reply in text only. /voice on sends voice notes again."
STATE_ON = (
    "Spoken replies are on for you: each reply comes as text, then as a voice note. /voice off stops that."
)
STATE_OFF = "Spoken replies are off for you. /voice on sends each reply as a voice note too."
USAGE = "/voice on sends my replies as voice notes too; /voice off stops that; /voice shows which it is."
# What a voice should not read out: Markdown's marks and code fences.
_MARKS = re.compile(r"```[^\n]*|[*_`#~>|]+")
_SENTENCE_END = re.compile(r"[.!?…](?=\s)")


@dataclass(frozen=True, slots=True)
class NotSpoken:
    """The voice failed: one short line the person may read (why, in plain words)."""

    line: str


def spoken_text(text: str, max_chars: int = MAX_SPOKEN_CHARS) -> str:
    """What is said of a reply: without Markdown's marks, at most `max_chars`, ending at the
    last whole sentence within them (else the last whole word)."""
    plain = " ".join(_MARKS.sub(" ", text).split())
    if len(plain) <= max_chars:
        return plain
    head = plain[: max_chars + 1]
    ends = [match.end() for match in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] > max_chars // 3:
        return head[: ends[-1]]
    return head.rsplit(" ", 1)[0] if " " in head else plain[:max_chars]


class SpokenReplies:
    """/voice, and the voice note of a reply. `voice` None: no voice is configured."""

    def __init__(
        self, turns: TurnLog, voice: SpeechSynthesis | None, *, max_chars: int = MAX_SPOKEN_CHARS
    ) -> None:
        self.turns = turns
        self.voice = voice
        self.max_chars = max_chars

    async def command(self, user_id: str, argument: str = "") -> str:
        """/voice [on|off]: the person's choice set, or shown, in plain words."""
        words = " ".join(argument.lower().split())
        if words == "on":
            if self.voice is None:
                return NO_BACKEND  # nothing stored: turning on what cannot speak would promise it
            await self.turns.set_spoken_replies(user_id, True)
            return VOICE_ON
        if words == "off":
            await self.turns.set_spoken_replies(user_id, False)
            return VOICE_OFF
        if words:
            return USAGE
        if self.voice is None:
            return NO_BACKEND
        return STATE_ON if await self.turns.speaks_replies(user_id) else STATE_OFF

    async def wanted(self, user_id: str) -> bool:
        """Whether this person's replies are to be spoken: a voice is configured and they asked.
        A store that cannot say is read as no: the text reply is what matters."""
        if self.voice is None:
            return False
        try:
            return await self.turns.speaks_replies(user_id)
        except StoreUnavailable:
            log.warning("spoken replies: cannot read %s's choice; text only this time", user_id)
            return False

    async def speak(self, reply: str, voice: str | None = None) -> Speech | NotSpoken | None:
        """The voice note of `reply`, in `voice` (the persona's; None: the configured one);
        NotSpoken with a line when the voice failed; None when there is nothing to say (no voice,
        an empty reply)."""
        text = spoken_text(reply, self.max_chars)
        if self.voice is None or not text:
            return None
        try:
            return await self.voice.synthesize(text, voice)
        except MediaError as exc:
            log.warning("spoken replies: %s failed: %s", self.voice.model_name, exc)
            return NotSpoken(str(exc))
