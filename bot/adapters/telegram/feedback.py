"""Reactions and 👍/👎 buttons on Kindred's replies become feedback on the stored reply turn."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from telegram import Chat, ReactionTypeEmoji, Update
from telegram.ext import ContextTypes

from bot.adapters.base import Services
from bot.adapters.telegram.chat import FEEDBACK_DOWN, FEEDBACK_UP
from bot.adapters.telegram.ids import PLATFORM, place_key, user_key
from bot.core.chat.access import NOT_ALLOWED
from bot.core.events import MessageReaction

log = logging.getLogger(__name__)

BUTTON_EMOJI = {FEEDBACK_UP: "👍", FEEDBACK_DOWN: "👎"}


def chosen_emoji(old: list[str], new: list[str]) -> str | None:
    """The reaction that counts after a change: the one just added, else one still there, else None."""
    added = [emoji for emoji in new if emoji not in old]
    if added:
        return added[-1]
    return new[-1] if new else None


def reaction_event(update: Update) -> MessageReaction | None:
    """The core's event for a person's changed reaction; None for anything else."""
    changed = update.message_reaction
    # Anonymous group admins react as the chat; there is no person to credit.
    if changed is None or changed.user is None or changed.user.is_bot:
        return None
    # PTB checks no types: what a webhook post puts here is read only if it is what Telegram sends.
    if (
        type(changed.user.id) is not int
        or not isinstance(changed.chat, Chat)
        or not isinstance(changed.date, datetime)
    ):
        return None
    emojis = [
        [r.emoji for r in side if isinstance(r, ReactionTypeEmoji)]
        for side in (changed.old_reaction, changed.new_reaction)
    ]
    return MessageReaction(
        platform=PLATFORM,
        chat_id=str(changed.chat.id),
        message_id=str(changed.message_id),
        user_id=user_key(changed.user.id),
        emoji=chosen_emoji(emojis[0], emojis[1]),
        sent_at=changed.date,
        source="reaction",
    )


class Feedback:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def on_reaction(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        event = reaction_event(update)
        if event is None or update.message_reaction is None:
            return
        if not self.services.access.may_talk(event.user_id, place_key(update.message_reaction.chat.id)):
            return
        result = await self.services.conversation.handle_message_reaction(event)
        log.debug("telegram reaction on %s: %s", event.message_id, result.status)

    async def on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None or query.data not in BUTTON_EMOJI or query.message is None:
            return
        if not self.services.access.may_talk(user_key(query.from_user.id), place_key(query.message.chat.id)):
            await query.answer(NOT_ALLOWED)
            return
        emoji = BUTTON_EMOJI[query.data]
        event = MessageReaction(
            platform=PLATFORM,
            chat_id=str(query.message.chat.id),
            message_id=str(query.message.message_id),
            user_id=user_key(query.from_user.id),
            emoji=emoji,
            sent_at=datetime.now(UTC),  # a button press carries no time of its own
            source="button",
        )
        result = await self.services.conversation.handle_message_reaction(event)
        if result.status == "recorded":
            await query.answer(f"Thanks for the {emoji}")
        else:
            await query.answer("That reply is too old for feedback.")
