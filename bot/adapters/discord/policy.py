"""Who Kindred answers in Discord, and how Discord ids become Kindred's platform-qualified ids.

Pure functions over named booleans, so each rule reads as a sentence and tests without a client.
"""

from __future__ import annotations

import re

PLATFORM = "discord"


def user_key(user_id: int) -> str:
    return f"discord:{user_id}"


def chat_key(channel_id: int) -> str:
    return f"discord:{channel_id}"


def places(guild_id: int | None) -> tuple[str, ...]:
    """The allowlist entries a message's place matches: its server, when it has one."""
    return (f"discord-guild:{guild_id}",) if guild_id is not None else ()


def is_addressed(*, from_a_bot: bool, in_dm: bool, mentions_me: bool, replies_to_me: bool) -> bool:
    """DMs: every message. Servers: only when mentioned or replied to. Bots: never (no loops)."""
    if from_a_bot:
        return False
    return in_dm or mentions_me or replies_to_me


def without_mention(text: str, my_id: int) -> str:
    """The message with Kindred's own @mention taken out: the model needs the words, not the ping."""
    return re.sub(rf"<@!?{my_id}>", " ", text).strip()


def reactions_reach_me(*, in_my_dm: bool, in_my_server: bool) -> bool:
    """Reaction events arrive only from Kindred's DMs and servers it is a member of. A user-installed
    /chat elsewhere gets 👍/👎 buttons instead."""
    return in_my_dm or in_my_server
