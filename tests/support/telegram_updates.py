"""The user side of the fake Telegram: builders of Bot API objects (users, chats, messages,
updates) in the exact JSON shapes of https://core.telegram.org/bots/api, so that
python-telegram-bot parses them as it would parse Telegram's own, and ChatWorld, the chats and the
update queue the fake server (tests/support/telegram_api.py) serves.

The module-level builders are pure and enqueue nothing: webhook tests post them as request bodies."""

from __future__ import annotations

import copy
import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Any

from tests.support.telegram_files import FileStore, NoteKind, attachment_json

JSON = dict[str, Any]

BOT_USERNAME = "kindred_test_bot"

# Telegram's supergroup ids are -100 followed by the channel id; basic groups are small negatives.
SUPERGROUP_ID_LIMIT = -1_000_000_000_000


def now() -> int:
    return int(time.time())


def utf16_len(text: str) -> int:
    """Entity offsets and lengths count UTF-16 code units, not code points."""
    return len(text.encode("utf-16-le")) // 2


def user_json(
    user_id: int, first_name: str = "Ann", *, username: str | None = None, language_code: str | None = "en"
) -> JSON:
    user: JSON = {"id": user_id, "is_bot": False, "first_name": first_name}
    if username is not None:
        user["username"] = username
    if language_code is not None:
        user["language_code"] = language_code
    return user


def private_chat_json(user: JSON) -> JSON:
    chat: JSON = {"id": user["id"], "type": "private", "first_name": user["first_name"]}
    if "username" in user:
        chat["username"] = user["username"]
    return chat


def group_chat_json(chat_id: int, title: str = "Friends") -> JSON:
    if chat_id >= 0:
        raise ValueError(f"group chat ids are negative, got {chat_id}")
    kind = "supergroup" if chat_id <= SUPERGROUP_ID_LIMIT else "group"
    return {"id": chat_id, "type": kind, "title": title}


def command_entities(text: str, offset: int = 0) -> list[JSON]:
    """Telegram marks a leading /command (with an optional @botname) as a bot_command entity."""
    if not text[offset:].startswith("/"):
        return []
    command = text[offset:].split(maxsplit=1)[0]
    return [{"type": "bot_command", "offset": utf16_len(text[:offset]), "length": utf16_len(command)}]


def quoted(message: JSON) -> JSON:
    """A message as it appears in reply_to_message: Telegram never nests a second reply level."""
    return {key: value for key, value in message.items() if key != "reply_to_message"}


def message_json(
    message_id: int,
    chat: JSON,
    sender: JSON,
    text: str | None,
    *,
    date: int | None = None,
    entities: list[JSON] | None = None,
    reply_to_message: JSON | None = None,
    reply_markup: JSON | None = None,
) -> JSON:
    message: JSON = {
        "message_id": message_id,
        "from": sender,
        "chat": chat,
        "date": now() if date is None else date,
    }
    if text is not None:
        message["text"] = text
    if entities:
        message["entities"] = entities
    if reply_to_message is not None:
        message["reply_to_message"] = quoted(reply_to_message)
    # Telegram echoes only inline keyboards: a reply keyboard never comes back inside a Message.
    if reply_markup is not None and "inline_keyboard" in reply_markup:
        message["reply_markup"] = reply_markup
    return message


def private_message_update(
    update_id: int,
    user_id: int,
    text: str,
    *,
    message_id: int = 1,
    first_name: str = "Ann",
    username: str | None = None,
    reply_to_message: JSON | None = None,
) -> JSON:
    user = user_json(user_id, first_name, username=username)
    message = message_json(
        message_id,
        private_chat_json(user),
        user,
        text,
        entities=command_entities(text),
        reply_to_message=reply_to_message,
    )
    return {"update_id": update_id, "message": message}


def group_message_update(
    update_id: int,
    chat_id: int,
    user_id: int,
    text: str,
    *,
    message_id: int = 1,
    first_name: str = "Ann",
    mention: bool = False,
    bot_username: str = BOT_USERNAME,
    reply_to_message: JSON | None = None,
    title: str = "Friends",
) -> JSON:
    entities: list[JSON] = []
    if mention:
        handle = f"@{bot_username}"
        text = f"{handle} {text}"
        entities.append({"type": "mention", "offset": 0, "length": utf16_len(handle)})
        entities += command_entities(text, len(handle) + 1)
    else:
        entities += command_entities(text)
    user = user_json(user_id, first_name)
    message = message_json(
        message_id,
        group_chat_json(chat_id, title),
        user,
        text,
        entities=entities,
        reply_to_message=reply_to_message,
    )
    return {"update_id": update_id, "message": message}


def reactions_json(emojis: list[str]) -> list[JSON]:
    return [{"type": "emoji", "emoji": emoji} for emoji in emojis]


def reaction_update(
    update_id: int, chat: JSON, message_id: int, user: JSON, *, old: list[str], new: list[str]
) -> JSON:
    return {
        "update_id": update_id,
        "message_reaction": {
            "chat": chat,
            "message_id": message_id,
            "user": user,
            "date": now(),
            "old_reaction": reactions_json(old),
            "new_reaction": reactions_json(new),
        },
    }


def callback_update(update_id: int, query_id: str, user: JSON, message: JSON, data: str) -> JSON:
    return {
        "update_id": update_id,
        "callback_query": {
            "id": query_id,
            "from": user,
            # Opaque to bots; Telegram derives it from the chat the button was pressed in.
            "chat_instance": str(abs(message["chat"]["id"]) * 7919 + 13),
            "message": message,
            "data": data,
        },
    }


def update_type(update: JSON) -> str:
    """An update carries update_id plus exactly one payload key, which names its type."""
    return next(key for key in update if key != "update_id")


@dataclass
class StoredMessage:
    data: JSON  # the Message exactly as Telegram would return it now
    reply_markup: JSON | None = None  # as sent, including keyboards Telegram does not echo
    history: list[str] = field(default_factory=list)  # every text it has had, oldest first

    @property
    def text(self) -> str | None:
        return self.data.get("text")

    @property
    def sender_id(self) -> int:
        return int(self.data["from"]["id"])


@dataclass
class FakeChat:
    data: JSON  # the Chat object
    messages: dict[int, StoredMessage] = field(default_factory=dict)
    # One counter for the bot's and the users' messages, as in a real chat.
    last_message_id: int = 0

    def claim_id(self, wanted: int | None = None) -> int:
        if wanted is None:
            wanted = self.last_message_id + 1
        if wanted in self.messages:
            raise ValueError(f"message {wanted} already exists in chat {self.data['id']}")
        self.last_message_id = max(self.last_message_id, wanted)
        return wanted

    def store(self, message: JSON, reply_markup: JSON | None = None) -> StoredMessage:
        stored = StoredMessage(message, reply_markup, [message["text"]] if "text" in message else [])
        self.messages[message["message_id"]] = stored
        return stored


class ChatWorld:
    """What Telegram holds for one bot: its chats with every message, and the updates not yet
    confirmed. The builder methods add a user's action to both and return the update."""

    def __init__(self, bot_user: JSON) -> None:
        self.bot_user = bot_user
        self.chats: dict[int, FakeChat] = {}
        self.updates: list[JSON] = []
        self.open_queries: set[str] = set()
        self._users: dict[int, JSON] = {}
        # What people sent as files: getFile and the download route serve them.
        self.files = FileStore()
        # Telegram never sends a bot the same update id twice, across restarts too: each fake starts
        # somewhere else, so that a bot whose shared state outlives a fake (webhook intake in
        # Redis) never takes a new fake's updates for retries of an old one's.
        self._update_ids = itertools.count(100_000_001 + random.randrange(1_000_000) * 1000)
        self._query_ids = itertools.count(4_123_456_789_000_000_001)

    def updates_changed(self) -> None:
        """Called after every enqueue; the server wakes its long polls here."""

    def chat(self, chat_id: int) -> FakeChat:
        """The chat, created on first use as if its user had started the bot."""
        if chat_id not in self.chats:
            data = private_chat_json(user_json(chat_id)) if chat_id > 0 else group_chat_json(chat_id)
            self.chats[chat_id] = FakeChat(data)
        return self.chats[chat_id]

    def enqueue(self, update: JSON) -> JSON:
        """Queue any update; its update_id must exceed those queued."""
        if self.updates and update["update_id"] <= self.updates[-1]["update_id"]:
            raise ValueError(f"update_id {update['update_id']} is not above the last queued one")
        self.updates.append(update)
        self.updates_changed()
        return update

    def _quote(self, chat: FakeChat, message_id: int | None) -> JSON | None:
        if message_id is None:
            return None
        if message_id not in chat.messages:
            raise ValueError(f"no message {message_id} in chat {chat.data['id']} to reply to")
        return chat.messages[message_id].data

    def _incoming(self, update: JSON) -> JSON:
        message = update["message"]
        chat = self.chat(message["chat"]["id"])
        chat.data = message["chat"]  # a user may have renamed themselves or the group
        self._users[message["from"]["id"]] = message["from"]
        chat.store(message)
        return self.enqueue(update)

    def private_message(
        self,
        user_id: int,
        text: str,
        *,
        first_name: str = "Ann",
        message_id: int | None = None,
        reply_to: int | None = None,
    ) -> JSON:
        chat = self.chat(user_id)
        update = private_message_update(
            next(self._update_ids),
            user_id,
            text,
            message_id=chat.claim_id(message_id),
            first_name=first_name,
            reply_to_message=self._quote(chat, reply_to),
        )
        return self._incoming(update)

    def group_message(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        mention: bool = False,
        reply_to_bot_message_id: int | None = None,
        title: str = "Friends",
        first_name: str = "Ann",
    ) -> JSON:
        if chat_id not in self.chats:
            self.chats[chat_id] = FakeChat(group_chat_json(chat_id, title))
        chat = self.chats[chat_id]
        update = group_message_update(
            next(self._update_ids),
            chat_id,
            user_id,
            text,
            message_id=chat.claim_id(),
            first_name=first_name,
            mention=mention,
            bot_username=self.bot_user["username"],
            title=title,
            reply_to_message=self._quote(chat, reply_to_bot_message_id),
        )
        return self._incoming(update)

    def voice_message(
        self,
        chat_id: int,
        user_id: int,
        data: bytes,
        *,
        kind: NoteKind = "voice",
        duration: int = 2,
        size: int | None = -1,
        caption: str | None = None,
        mention: bool = False,
        reply_to: int | None = None,
        first_name: str = "Ann",
    ) -> JSON:
        """A voice note, audio file or video note from `user_id` in `chat_id` (their own id: the
        private chat). `size` -1: the file's real size; None: left out, as Telegram may."""
        chat = (
            self.chat(chat_id)
            if chat_id > 0
            else self.chats.setdefault(chat_id, FakeChat(group_chat_json(chat_id)))
        )
        stored = self.files.add(data, kind)
        user = user_json(user_id, first_name)
        message = message_json(
            chat.claim_id(), chat.data, user, None, reply_to_message=self._quote(chat, reply_to)
        )
        message[kind] = attachment_json(
            stored, kind, duration=duration, size=len(data) if size == -1 else size
        )
        if mention:
            handle = f"@{self.bot_user['username']}"
            caption = f"{handle} {caption or ''}".strip()
            message["caption_entities"] = [{"type": "mention", "offset": 0, "length": utf16_len(handle)}]
        if caption is not None:
            message["caption"] = caption
        return self._incoming({"update_id": next(self._update_ids), "message": message})

    def document_message(
        self,
        chat_id: int,
        user_id: int,
        data: bytes,
        name: str,
        *,
        mime_type: str = "application/pdf",
        size: int | None = -1,
        caption: str | None = None,
        mention: bool = False,
        reply_to: int | None = None,
    ) -> JSON:
        """A document from `user_id` in `chat_id`. `size` -1: the file's real size; None: left out."""
        chat = (
            self.chat(chat_id)
            if chat_id > 0
            else self.chats.setdefault(chat_id, FakeChat(group_chat_json(chat_id)))
        )
        stored = self.files.add_document(data, name)
        message = message_json(
            chat.claim_id(),
            chat.data,
            user_json(user_id, "Ann"),
            None,
            reply_to_message=self._quote(chat, reply_to),
        )
        found: JSON = {"file_id": stored.file_id, "file_unique_id": stored.file_unique_id, "file_name": name,
                       "mime_type": mime_type}  # fmt: skip
        if size is not None:
            found["file_size"] = len(data) if size == -1 else size
        message["document"] = found
        if mention:
            handle = f"@{self.bot_user['username']}"
            caption = f"{handle} {caption or ''}".strip()
            message["caption_entities"] = [{"type": "mention", "offset": 0, "length": utf16_len(handle)}]
        if caption is not None:
            message["caption"] = caption
        return self._incoming({"update_id": next(self._update_ids), "message": message})

    def reaction(
        self, chat_id: int, message_id: int, user_id: int, *, old: list[str], new: list[str]
    ) -> JSON:
        user = self._users.get(user_id) or user_json(user_id)
        chat = self.chat(chat_id).data
        return self.enqueue(reaction_update(next(self._update_ids), chat, message_id, user, old=old, new=new))

    def callback(self, chat_id: int, message_id: int, user_id: int, data: str) -> JSON:
        stored = self.chat(chat_id).messages.get(message_id)
        if stored is None or stored.sender_id != self.bot_user["id"]:
            raise ValueError(f"no bot message {message_id} in chat {chat_id} to carry a button")
        query_id = str(next(self._query_ids))
        self.open_queries.add(query_id)
        user = self._users.get(user_id) or user_json(user_id)
        message = copy.deepcopy(stored.data)
        return self.enqueue(callback_update(next(self._update_ids), query_id, user, message, data))

    def bot_messages(self, chat_id: int) -> list[StoredMessage]:
        chat = self.chats.get(chat_id)
        if chat is None:
            return []
        return [m for _, m in sorted(chat.messages.items()) if m.sender_id == self.bot_user["id"]]

    def texts(self, chat_id: int) -> list[str]:
        return [m.text for m in self.bot_messages(chat_id) if m.text is not None]
