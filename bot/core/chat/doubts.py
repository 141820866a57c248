"""Replies whose delivery is unknown, from the send that may have landed to the person's answer.

A platform whose send may have landed (the request was written, then a 5xx or no answer came)
never sends it again by itself (bot/adapters/telegram/delivery_rule.py); the delivery records the
reply here instead. It becomes delivered when the person reacts or replies to it: the platform
message id was never learned, so a reaction or reply on an id Kindred does not know is linked to
the chat's one unknown reply, when exactly one waits there. At the person's next message, if the
last reply is still unknown, the core says so once (`Doubtful`), and the platform shows the line
with a button that sends the reply again, once (docs/reliability.md, "Delivery unknown").

Platform-free: a platform renders `Doubtful` (Telegram an inline keyboard, Discord a component)
and hands back the button's turn id.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.core.errors import StoreUnavailable
from bot.core.models import DeliveryDoubt, MessageLink
from bot.core.store import Store

log = logging.getLogger(__name__)

DOUBT_NOTICE = "My last reply may not have reached you"
# The notice quotes the reply's opening words, so that the person can tell whether it is the one
# they are missing: whole words, up to about this many characters, on one line.
QUOTE_CHARS = 60
# Markup that Discord would render (Telegram's sends carry no parse mode): a quote cut short must
# not open a code block or a spoiler in the notice.
_MARKUP = re.compile(r"[*_`~|>\\]")
RESEND_LABEL = "Send it again"
# What the press answers: the first by the reply's own person, and every other.
SENT_AGAIN = "Sent again."
NOTHING_TO_SEND = "That reply was already sent again."
# A button's data: the prefix, then the turn id; both platforms' button data fit it (64 bytes, 100).
RESEND_PREFIX = "resend:"


@dataclass(frozen=True, slots=True)
class Doubtful:
    """What the platform shows once, before its answer: one short line, and a button that asks
    for the reply `turn_id` again (its data: `resend_data`)."""

    turn_id: int
    text: str = f"{DOUBT_NOTICE}."
    button: str = RESEND_LABEL

    @property
    def resend_data(self) -> str:
        return f"{RESEND_PREFIX}{self.turn_id}"


def doubt_notice(reply: str) -> str:
    """The notice for `reply`: `My last reply may not have reached you: “I'm glad the walk …”`,
    the reply's opening words as plain text on one line."""
    quoted = ""
    for word in _MARKUP.sub("", reply).split():
        if len(quoted) + 1 + len(word) > QUOTE_CHARS:
            quoted = f"{quoted or word[:QUOTE_CHARS]} …"
            break
        quoted = f"{quoted} {word}" if quoted else word
    return f"{DOUBT_NOTICE}: “{quoted}”" if quoted else f"{DOUBT_NOTICE}."


def resend_turn(data: str) -> int | None:
    """The turn a resend button's data names; None for any other data."""
    number = data.removeprefix(RESEND_PREFIX)
    return int(number) if data.startswith(RESEND_PREFIX) and number.isdigit() else None


class DeliveryDoubts:
    """The core's side of "delivery unknown", over the store's DeliveryLog and message links."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def maybe_shown(self, platform: str, chat_id: str, turn_id: int, user_id: str) -> None:
        """A stored reply's send may have landed or not."""
        try:
            await self._store.deliveries.record(DeliveryDoubt(platform, chat_id, turn_id, user_id))
        except StoreUnavailable as exc:
            # The turn itself is stored; only the notice at the next message is lost.
            log.warning("a reply's unknown delivery was not recorded: %s", exc)

    async def confirmed_by(
        self, platform: str, chat_id: str, message_id: str, link: MessageLink | None
    ) -> MessageLink | None:
        """The person reacted or replied to `message_id` (whose link, if Kindred has one, is `link`):
        the reply it shows is delivered. An id Kindred never learned is linked to the chat's one
        unknown reply, when exactly one waits there; otherwise `link` is returned as it was."""
        try:
            waiting = await self._store.deliveries.waiting(platform, chat_id)
            if link is None and len(waiting) == 1:
                doubt = waiting[0]
                link = MessageLink(platform, chat_id, message_id, doubt.turn_id, doubt.user_id)
                await self._store.turns.link_message(link)
            if link is not None and any(doubt.turn_id == link.turn_id for doubt in waiting):
                await self._store.deliveries.settle(platform, chat_id, link.turn_id, "delivered")
        except StoreUnavailable as exc:
            log.warning("a reply's delivery could not be confirmed: %s", exc)
        return link

    async def at_next_message(self, platform: str, chat_id: str, replying_to: str | None) -> Doubtful | None:
        """The person wrote again (replying to the bot's message `replying_to`, if they did): what to
        tell them first, once, when the chat's last reply is still unknown."""
        try:
            if replying_to is not None:
                link = await self._store.turns.find_message(platform, chat_id, replying_to)
                await self.confirmed_by(platform, chat_id, replying_to, link)
            waiting = await self._store.deliveries.waiting(platform, chat_id)
            last = waiting[-1] if waiting else None
            if last is None or last.status != "unknown":
                return None
            told = await self._store.deliveries.settle(platform, chat_id, last.turn_id, "told")
        except StoreUnavailable as exc:
            log.warning("replies of unknown delivery could not be read: %s", exc)
            return None
        return Doubtful(last.turn_id, doubt_notice(last.text)) if told else None

    async def resend(self, platform: str, chat_id: str, turn_id: int, user_id: str) -> str | None:
        """The reply's text to send again, to the first press of its button by its own person;
        None to anyone else, and to every later press."""
        try:
            waiting = await self._store.deliveries.waiting(platform, chat_id)
            doubt = next((d for d in waiting if d.turn_id == turn_id and d.user_id == user_id), None)
            if doubt is None or not await self._store.deliveries.settle(platform, chat_id, turn_id, "resent"):
                return None
        except StoreUnavailable as exc:
            log.warning("a reply could not be sent again: %s", exc)
            return None
        return doubt.text

    async def resent(
        self, platform: str, chat_id: str, message_ids: Sequence[str], turn_id: int, user_id: str
    ) -> None:
        """The reply shows again in `message_ids`: a reaction on them reaches its turn."""
        try:
            for message_id in message_ids:
                await self._store.turns.link_message(
                    MessageLink(platform, chat_id, message_id, turn_id, user_id)
                )
        except StoreUnavailable as exc:
            log.warning("a reply sent again was not linked: %s", exc)
