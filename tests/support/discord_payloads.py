"""Discord API payloads shaped as discord/types/*.py declares them, for the loopback fake.

Only the builders live here; tests/support/discord_gateway.py serves them.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime
from typing import Any

Payload = dict[str, Any]

DISCORD_EPOCH_MS = 1_420_070_400_000
TOKEN = "MTk4NjIy.fake-kindred-token.never-logged"
BOT_ID = 4_100_000_000_000_000_001
APP_ID = BOT_ID  # as for every bot made since 2016, the application id is the bot user's id
OWNER_ID = 4_100_000_000_000_000_002
GUILD_ID = 4_200_000_000_000_000_001
GUILD_CHANNEL_ID = 4_200_000_000_000_000_010
FOREIGN_GUILD_ID = 4_300_000_000_000_000_001  # a server the bot is not in (user-installed /chat)
FOREIGN_CHANNEL_ID = 4_300_000_000_000_000_010
FILE_LIMIT = 10 * 1024 * 1024
EVERYTHING = str((1 << 50) - 1)  # permission bits, as a string

_counter = itertools.count(1)


def snowflake() -> int:
    """A fresh id whose timestamp is now, as Discord makes them (discord.py reads created_at from it)."""
    now_ms = int(time.time() * 1000)
    return ((now_ms - DISCORD_EPOCH_MS) << 22) | (next(_counter) % (1 << 22))


def iso_now() -> str:
    return datetime.now(UTC).isoformat()


def user(user_id: int, name: str, *, bot: bool = False) -> Payload:
    return {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "global_name": name.title(),
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


BOT_USER = user(BOT_ID, "kindred", bot=True)


def member(person: Payload) -> Payload:
    return {
        "user": person,
        "roles": [],
        "joined_at": iso_now(),
        "deaf": False,
        "mute": False,
        "flags": 0,
        "permissions": EVERYTHING,
    }


def app_info() -> Payload:
    return {
        "id": str(APP_ID),
        "name": "Kindred",
        "description": "A companion that remembers.",
        "icon": None,
        "bot_public": True,
        "bot_require_code_grant": False,
        "owner": user(OWNER_ID, "owner"),
        "verify_key": "0" * 64,
        "flags": 0,
        "team": None,
    }


def text_channel(channel_id: int, guild_id: int, name: str = "general") -> Payload:
    return {
        "id": str(channel_id),
        "type": 0,
        "guild_id": str(guild_id),
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "flags": 0,
        "permissions": EVERYTHING,
    }


def dm_channel_of(user_id: int) -> int:
    """The id of the bot's DM channel with a person: one per person, stable."""
    return user_id + 1


def dm_channel(channel_id: int, recipient: Payload) -> Payload:
    return {"id": str(channel_id), "type": 1, "recipients": [recipient], "last_message_id": None, "flags": 0}


def guild_create(guild_id: int, channels: list[Payload]) -> Payload:
    everyone = {
        "id": str(guild_id),
        "name": "@everyone",
        "permissions": "104324673",
        "position": 0,
        "color": 0,
        "hoist": False,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }
    return {
        "id": str(guild_id),
        "name": "Test server",
        "icon": None,
        "owner_id": str(OWNER_ID),
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "roles": [everyone],
        "emojis": [],
        "stickers": [],
        "features": [],
        "mfa_level": 0,
        "system_channel_flags": 0,
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "nsfw_level": 0,
        "premium_progress_bar_enabled": False,
        "joined_at": iso_now(),
        "large": False,
        "unavailable": False,
        "member_count": 2,
        "members": [member(BOT_USER)],
        "channels": channels,
        "threads": [],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }


def ready(session_id: str, resume_url: str, guild_ids: list[int]) -> Payload:
    return {
        "v": 10,
        "user": BOT_USER,
        "guilds": [{"id": str(guild_id), "unavailable": True} for guild_id in guild_ids],
        "session_id": session_id,
        "resume_gateway_url": resume_url,
        "application": {"id": str(APP_ID), "flags": 0},
    }


def message(
    message_id: int,
    channel_id: int,
    author: Payload,
    content: str,
    *,
    guild_id: int | None = None,
    mentions: list[Payload] | None = None,
    replying_to: Payload | None = None,
    **extra: Any,
) -> Payload:
    payload: Payload = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": content,
        "timestamp": iso_now(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": mentions or [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "type": 0,
        "flags": 0,
        "components": [],
    }
    if guild_id is not None:
        payload["guild_id"] = str(guild_id)
        if not author.get("bot"):
            payload["member"] = {key: value for key, value in member(author).items() if key != "user"}
    if replying_to is not None:
        payload["type"] = 19
        payload["message_reference"] = {
            "type": 0,
            "message_id": replying_to["id"],
            "channel_id": str(channel_id),
        }
        payload["referenced_message"] = replying_to
    payload.update(extra)
    return payload


def interaction(
    kind: int,
    data: Payload,
    person: Payload,
    channel: Payload,
    *,
    guild_id: int | None = None,
    installed_by_user: bool = False,
    message: Payload | None = None,
) -> Payload:
    """An INTERACTION_CREATE payload. `kind` 2: a slash command, 3: a button press or a menu choice."""
    owners: dict[str, str] = {"1": person["id"]} if installed_by_user else {"0": str(guild_id or 0)}
    if guild_id is None and not installed_by_user:
        owners = {"1": person["id"]}
    payload: Payload = {
        "id": str(snowflake()),
        "application_id": str(APP_ID),
        "type": kind,
        "data": data,
        "token": f"itoken-{snowflake()}",
        "version": 1,
        "channel_id": channel["id"],
        "channel": channel,
        "app_permissions": EVERYTHING,
        "locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": owners,
        # 0: a server, 1: the bot's DM, 2: any other private chat
        "context": 0 if guild_id is not None else 1,
        "attachment_size_limit": FILE_LIMIT,
    }
    if guild_id is not None:
        payload["guild_id"] = str(guild_id)
        payload["guild_locale"] = "en-US"
        payload["member"] = member(person)
    else:
        payload["user"] = person
    if message is not None:
        payload["message"] = message
    return payload


def slash(name: str, **options: str) -> Payload:
    return {
        "id": str(snowflake()),
        "name": name,
        "type": 1,
        "options": [{"name": key, "type": 3, "value": value} for key, value in options.items()],
    }


def button(custom_id: str) -> Payload:
    return {"custom_id": custom_id, "component_type": 2}


def select_menu(custom_id: str, values: list[str]) -> Payload:
    """A string select menu's choice: component type 3, the values picked."""
    return {"custom_id": custom_id, "component_type": 3, "values": values}


def reaction(
    person_id: int, channel_id: int, message_id: int, emoji: str, *, guild_id: int | None = None
) -> Payload:
    payload: Payload = {
        "user_id": str(person_id),
        "channel_id": str(channel_id),
        "message_id": str(message_id),
        "emoji": {"id": None, "name": emoji},
        "burst": False,
        "type": 0,
    }
    if guild_id is not None:
        payload["guild_id"] = str(guild_id)
    return payload


# What Discord adds to a command it keeps, and leaves out of it (an option's `required: false`).
COMMAND_DEFAULTS: dict[str, Any] = {
    "default_member_permissions": None,
    "name_localizations": None,
    "description_localizations": None,
    "nsfw": False,
    "dm_permission": True,
}


def kept_as_discord_does(command: Payload) -> Payload:
    """A command as Discord answers it later: its defaults filled in, permissions as a string, an
    option's `required: false` and an empty option list left out."""
    kept = COMMAND_DEFAULTS | {key: value for key, value in command.items() if key != "options"}
    if kept["default_member_permissions"] is not None:
        kept["default_member_permissions"] = str(kept["default_member_permissions"])
    options = [
        {"name_localizations": None, "description_localizations": None}
        | {key: value for key, value in option.items() if not (key == "required" and value is False)}
        for option in command.get("options") or []
    ]
    return kept | ({"options": options} if options else {})
