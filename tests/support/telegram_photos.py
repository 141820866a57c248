"""Photos and image files sent to the loopback Bot API, as https://core.telegram.org/bots/api
describes them: a photo is a list of PhotoSize (each size its own file, smallest first), an image
sent as a file is a Document with the MIME type the sender's app gave it from the file's name."""

from __future__ import annotations

import itertools
from typing import Any

from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.telegram_files import StoredFile
from tests.support.telegram_updates import FakeChat, group_chat_json, message_json, user_json, utf16_len

JSON = dict[str, Any]
_IDS = itertools.count(1)


def _stored(api: FakeTelegramBotApi, data: bytes, path: str) -> StoredFile:
    n = next(_IDS)
    stored = StoredFile(f"AgACAgIAAxkBAAP{n:08d}", f"AQAD{n:06d}", path.format(n=n), data)
    api.files.files[stored.file_id] = stored
    return stored


def _message(
    api: FakeTelegramBotApi, chat_id: int, user_id: int, caption: str | None, mention: bool
) -> tuple[FakeChat, JSON]:
    chat = (
        api.chat(chat_id)
        if chat_id > 0
        else api.chats.setdefault(chat_id, FakeChat(group_chat_json(chat_id)))
    )
    message = message_json(chat.claim_id(), chat.data, user_json(user_id, "Ann"), None)
    if mention:
        handle = f"@{api.bot_user['username']}"
        caption = f"{handle} {caption or ''}".strip()
        message["caption_entities"] = [{"type": "mention", "offset": 0, "length": utf16_len(handle)}]
    if caption is not None:
        message["caption"] = caption
    return chat, message


def photo_message(
    api: FakeTelegramBotApi,
    chat_id: int,
    user_id: int,
    sizes: list[tuple[bytes, int, int]],
    *,
    caption: str | None = None,
    mention: bool = False,
    claimed_sizes: list[int] | None = None,
) -> JSON:
    """A photo: `sizes` as (JPEG bytes, width, height), smallest first; `claimed_sizes` the
    file_size each claims (default: the real one)."""
    _, message = _message(api, chat_id, user_id, caption, mention)
    message["photo"] = []
    for place, (data, width, height) in enumerate(sizes):
        stored = _stored(api, data, "photos/file_{n}.jpg")
        size = claimed_sizes[place] if claimed_sizes is not None else len(data)
        message["photo"].append({
            "file_id": stored.file_id, "file_unique_id": stored.file_unique_id,
            "width": width, "height": height, "file_size": size,
        })  # fmt: skip
    return api._incoming({"update_id": next(api._update_ids), "message": message})


def image_document(
    api: FakeTelegramBotApi,
    chat_id: int,
    user_id: int,
    data: bytes,
    name: str,
    mime: str,
    *,
    caption: str | None = None,
) -> JSON:
    """A file sent as a document, with the name and MIME type the sender's app gave it."""
    _, message = _message(api, chat_id, user_id, caption, False)
    stored = _stored(api, data, "documents/file_{n}")
    message["document"] = {
        "file_id": stored.file_id, "file_unique_id": stored.file_unique_id,
        "file_name": name, "mime_type": mime, "file_size": len(data),
    }  # fmt: skip
    return api._incoming({"update_id": next(api._update_ids), "message": message})
