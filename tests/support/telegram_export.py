"""A small synthetic Telegram Desktop export (result.json) with every shape a real one has."""

from __future__ import annotations

from typing import Any

ME = "user1001"
SISTER = "user2002"


def message(number: int, sender: str, name: str, text: Any, **extra: Any) -> dict[str, Any]:
    moment = 1_700_000_000 + number * 60
    return {"id": number, "type": "message", "date": "2023-11-14T22:13:20", "date_unixtime": str(moment),
            "from": name, "from_id": sender, "text": text, **extra}  # fmt: skip


def without(entry: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in keys}


def chat_export() -> dict[str, Any]:
    """One chat: Ann (the person) and her sister Mia, with a service message, a photo without a
    caption, a sticker, entity lists, emoji, a message with no date and one with only `date`."""
    return {
        "name": "Mia",
        "type": "personal_chat",
        "id": 2002,
        "messages": [
            message(1, ME, "Ann", "I just adopted a dog called Biscuit 🐶"),
            message(2, SISTER, "Mia", "Aww! Send pictures"),
            {
                "id": 3,
                "type": "service",
                "date": "2023-11-14T22:16:20",
                "actor": "Ann",
                "actor_id": ME,
                "action": "phone_call",
                "duration_seconds": 61,
                "text": "",
            },
            message(4, ME, "Ann", "", photo="photos/photo_1.jpg", width=800, height=600),
            message(
                5,
                ME,
                "Ann",
                [
                    "I moved to ",
                    {"type": "bold", "text": "Lyon"},
                    " last spring, see ",
                    {"type": "link", "text": "https://example.org/lyon"},
                ],
            ),
            message(6, ME, "Ann", "", file="stickers/sticker.webp", media_type="sticker", sticker_emoji="😂"),
            without(message(7, ME, "Ann", "no date on this one"), "date", "date_unixtime"),
            without(message(8, ME, "Ann", "Je préfère le thé vert 🍵"), "date_unixtime"),
            message(9, SISTER, "Mia", [{"type": "mention", "text": "@ann"}, " call mum tonight"]),
            "not a message at all",
            message(11, ME, "Ann", {"unexpected": "shape"}),
        ],
    }


def account_export() -> dict[str, Any]:
    """A whole account's export: it names its owner, so --me is not needed."""
    other = {"name": "Work", "type": "private_group", "id": 3003,
             "messages": [message(20, ME, "Ann", "I work night shifts as a radiographer"),
                          message(21, "user3003", "Sam", "Rota is up")]}  # fmt: skip
    return {"about": "export", "personal_information": {"user_id": 1001, "first_name": "Ann"},
            "chats": {"about": "chats", "list": [chat_export(), other]}}  # fmt: skip
