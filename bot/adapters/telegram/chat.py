"""A person's text message in, a streamed reply out. Which messages to answer is decided here."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal

from telegram import Chat, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import ChatAction, ChatType, MessageEntityType
from telegram.error import Forbidden
from telegram.ext import ContextTypes

from bot.adapters.base import Services
from bot.adapters.delivery import Layout, LinkTo, deliver
from bot.adapters.spoken import SpeakTo
from bot.adapters.telegram.ids import PLATFORM, chat_key, place_key, user_key
from bot.adapters.telegram.resend import replied_bot_message, tell_doubt
from bot.adapters.telegram.surface import MESSAGE_LIMIT, TelegramSurface, Unreachable, utf16_len
from bot.core.chat.access import NOT_ALLOWED
from bot.core.chat.ratelimit import slow_down
from bot.core.events import ReplyDone, ReplyEvent, UserMessage

log = logging.getLogger(__name__)

GroupMode = Literal["mention", "all", "off"]
FEEDBACK_UP = "fb:up"
FEEDBACK_DOWN = "fb:down"


@dataclass(frozen=True)
class ChatPolicy:
    group_mode: GroupMode = "mention"
    feedback_buttons: bool = True
    edit_interval_s: float = 1.0
    # sendMessageDraft previews the reply in private chats; editing a sent message is the fallback.
    drafts: bool = True
    typing_delay_s: float = 1.0
    # A reply written faster than this is sent whole, once: one Bot API call instead of two or more.
    first_show_delay_s: float = 0.15


def feedback_buttons() -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton("👍", callback_data=FEEDBACK_UP),
                InlineKeyboardButton("👎", callback_data=FEEDBACK_DOWN),
            ]
        ]
    )


def is_addressed(message: Message, bot_id: int, bot_username: str, mode: GroupMode) -> bool:
    """Private chats: always. Groups: per `mode`; "mention" means an @mention or a reply to the bot."""
    if message.chat.type == ChatType.PRIVATE:
        return True
    if mode != "mention":
        return mode == "all"
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return True
    return _mentions(message, bot_id, bot_username)


def _mentions(message: Message, bot_id: int, bot_username: str) -> bool:
    """An @mention (or a text mention) of the bot in the text, or in a file's caption."""
    kinds: list[str | None] = [MessageEntityType.MENTION, MessageEntityType.TEXT_MENTION]
    try:
        found = (
            message.parse_entities(kinds)
            if message.text is not None
            else message.parse_caption_entities(kinds)
        )
    except UnicodeError:  # an entity ending inside a surrogate pair, or a lone surrogate in the
        return False  # text (JSON's "\ud800"): no client sends either
    for entity, text in found.items():
        if entity.type == MessageEntityType.TEXT_MENTION and entity.user and entity.user.id == bot_id:
            return True
        if text.lower() == f"@{bot_username}".lower():
            return True
    return False


def without_mention(text: str, bot_username: str) -> str:
    cleaned = text.replace(f"@{bot_username}", " ")
    return " ".join(cleaned.split(" ")).strip() if cleaned != text else text


def incoming(update: Update, bot_id: int, bot_username: str, mode: GroupMode) -> UserMessage | None:
    """The core's event for a text message the bot should answer; None for anything else (no
    text, no person, a bot, not addressed to it in a group)."""
    message = update.effective_message
    person = update.effective_user
    if message is None or person is None or not _well_formed(message) or person.is_bot:
        return None
    text = message.text
    if text is None:  # _well_formed saw to that; this tells the type checker
        return None
    # A channel post forwarded into its discussion group, or a message sent as a chat: no
    # person to remember it for (Telegram's service account would pool everyone's words).
    if message.sender_chat is not None or message.is_automatic_forward:
        return None
    if not is_addressed(message, bot_id, bot_username, mode):
        return None
    private = message.chat.type == ChatType.PRIVATE
    return UserMessage(
        user_id=user_key(person.id),
        chat_id=chat_key(message.chat.id),
        text=text if private else without_mention(text, bot_username),
        sent_at=message.date,
        # A redelivered update (webhook retry, restart mid-poll) stores nothing twice.
        idempotency_key=f"telegram:{message.chat.id}:{message.message_id}",
        private=private,
        places=(place_key(message.chat.id),),
    )


def _well_formed(message: Message) -> bool:
    """What the translation reads has the types the Bot API promises. PTB checks none of them: a
    webhook post (or a proxy between) can put a list where the text belongs."""
    entities_ok = all(
        isinstance(e.type, str) and type(e.offset) is int and type(e.length) is int for e in message.entities
    )
    person = message.from_user
    return (
        isinstance(message.text, str)
        and isinstance(message.chat, Chat)
        and type(message.chat.id) is int
        and (person is None or type(person.id) is int)
        and entities_ok
    )


class ChatHandler:
    def __init__(self, services: Services, policy: ChatPolicy) -> None:
        self.services = services
        self.policy = policy

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        bot = context.bot
        event = incoming(update, bot.id, bot.username, self.policy.group_mode)
        message = update.effective_message
        if event is None or message is None or not await self.admitted(message, event.user_id):
            return
        await self.answer(message, event.user_id, self.services.conversation.handle_message(event))

    async def admitted(self, message: Message, user_id: str) -> bool:
        """Whether this person may talk here now; if not, they are told why."""
        access = self.services.access
        if not access.may_talk(user_id, place_key(message.chat.id)):
            await message.reply_text(NOT_ALLOWED)
            return False
        wait = 0.0 if access.is_admin(user_id) else await self.services.limiter.take(user_id)
        if wait > 0:
            await message.reply_text(slow_down(wait))
            return False
        return True

    async def answer(self, message: Message, user_id: str, events: AsyncIterator[ReplyEvent]) -> None:
        """Deliver the core's reply to `message` in its chat (a text's, or a voice note's)."""
        chat, bot = message.chat, message.get_bot()
        thread_id = message.message_thread_id if message.is_topic_message else None
        conversation = self.services.conversation
        replying_to = replied_bot_message(message, bot.id)
        doubt = await conversation.doubts.at_next_message(PLATFORM, str(chat.id), replying_to)
        if doubt is not None:
            await tell_doubt(bot, chat.id, thread_id, doubt)
        surface = TelegramSurface(
            bot,
            chat.id,
            reply_to=None if chat.type == ChatType.PRIVATE else message.message_id,
            thread_id=thread_id,
            buttons=feedback_buttons() if self.policy.feedback_buttons else None,
        )
        use_draft = self.policy.drafts and chat.type == ChatType.PRIVATE
        layout = Layout(
            limit=MESSAGE_LIMIT,
            measure=utf16_len,
            interval_s=self.policy.edit_interval_s,
            first_delay_s=self.policy.first_show_delay_s,
            draft=surface.draft if use_draft else None,
        )
        link = LinkTo(conversation, PLATFORM, str(chat.id), user_id)
        spoken = self.services.spoken
        speak = SpeakTo(spoken, user_id, surface) if spoken is not None else None
        # "typing…" only when the first words are slow to come: a quick reply needs no extra call.
        typing = asyncio.create_task(_typing_after(chat, self.policy.typing_delay_s))
        try:
            delivered = await deliver(
                _watched(events, typing, surface), surface, layout, link=link, speak=speak
            )
        finally:
            typing.cancel()
            await asyncio.wait([typing])
        refused = delivered.not_shown
        blocked: Exception | None = refused if isinstance(refused, Unreachable) else None
        if not typing.cancelled():
            blocked = typing.result() or blocked
        if blocked is not None:
            # Only now: storing the person's own turn marks them active, so this must come after.
            await self._unreachable(user_id, blocked)

    async def _unreachable(self, user_id: str, exc: Exception) -> None:
        log.info("telegram: %s cannot be reached (%s); marked inactive", user_id, exc)
        await self.services.controls.mark_unreachable(user_id)


async def _watched(
    events: AsyncIterator[ReplyEvent], typing: asyncio.Task[Exception | None], surface: TelegramSurface
) -> AsyncIterator[ReplyEvent]:
    """The core's events, cancelling "typing…" once the first arrives and telling the surface how
    the reply ends before the delivery shows it finished."""
    async for item in events:
        typing.cancel()
        if isinstance(item, ReplyDone):
            surface.ending(stored=item.turn_id is not None)
        yield item


# Telegram shows "typing…" for about 5 seconds, or until a message arrives.
TYPING_LASTS_S = 4.5


async def _typing_after(chat: Chat, delay_s: float) -> Exception | None:
    """Show "typing…" until cancelled by the first event (best-of-n sends nothing until every
    candidate is written and one chosen); a refusal because the person blocked the bot is
    returned, not raised."""
    await asyncio.sleep(delay_s)
    while True:
        try:
            await chat.send_action(ChatAction.TYPING)
        except Forbidden as exc:
            return exc
        await asyncio.sleep(TYPING_LASTS_S)
