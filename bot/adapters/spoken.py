"""A reply's voice note, after its text: the same on every platform. A platform adds only a
`Speaker` (send a voice note, say one line).

The text was delivered first, whole; only a reply that showed and has words is spoken, and only
for a person who turned spoken replies on. The voice note is linked to the reply's turn like its
text, so a reaction on either counts. Nothing here can lose the text: a voice that fails, or a
platform that refuses the voice note, is logged, and the person gets at most one short line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bot.core.chat.spoken import NotSpoken, SpokenReplies
from bot.core.media.models import Speech

if TYPE_CHECKING:
    from bot.adapters.delivery import Delivered, LinkTo

log = logging.getLogger(__name__)


class Speaker(Protocol):
    async def send_voice(self, speech: Speech) -> str:
        """Send `speech` as a voice note (or an audio attachment) after the reply; its message id.
        Raises NotShown (bot/adapters/delivery.py) when the platform did not take it."""
        ...

    async def say(self, text: str) -> None:
        """One short line in the chat (why there is no voice note). Raises NotShown."""
        ...


@dataclass(frozen=True, slots=True)
class SpeakTo:
    """Whose replies may be spoken, and where."""

    replies: SpokenReplies
    user_id: str
    speaker: Speaker


async def speak_reply(delivered: Delivered, to: SpeakTo, link: LinkTo | None) -> None:
    """Send the voice note of a delivered reply, when the person wants one; never raises for the
    voice or the platform."""
    from bot.adapters.delivery import NotShown

    done = delivered.done
    if done is None or delivered.not_shown is not None or not done.text.strip():
        return
    if not await to.replies.wanted(to.user_id):
        return
    spoken = await to.replies.speak(done.text, done.voice)
    try:
        if isinstance(spoken, NotSpoken):
            await to.speaker.say(spoken.line)
        elif spoken is not None:
            message_id = await to.speaker.send_voice(spoken)
            if link is not None:
                await link.conversation.link_reply(
                    link.platform, link.chat_id, [message_id], done, link.user_id
                )
    except NotShown as exc:
        log.warning("a spoken reply could not be shown: %s", exc)
