"""What the Discord adapter is told at start: the token, where to sync commands, and its tunables."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr

from bot.adapters.discord.failures import REQUEST_TIMEOUT_S
from bot.adapters.streaming import EDIT_INTERVAL_S

# Discord's own limit for one message's text.
MESSAGE_LIMIT = 2000
# A reply written faster than this is created whole, once: one call instead of a create and its
# edits, and a create that may have been delivered (which is never edited, its id unknown) shows
# the whole reply rather than its first words.
FIRST_SHOW_DELAY_S = 0.15
# How long start() waits for READY before it gives up.
READY_TIMEOUT_S = 60.0
# discord.py waits this long after the last GUILD_CREATE before it calls the client ready.
GUILD_READY_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class DiscordOptions:
    # A SecretStr: the dataclass's repr, and so any log of it, shows asterisks.
    token: SecretStr
    dev_guild_id: int | None = None
    feedback_buttons: bool = True
    # Privileged: only ask for it when the Developer Portal grants it (see SETUP.md).
    message_content: bool = False
    edit_interval_s: float = EDIT_INTERVAL_S
    first_show_delay_s: float = FIRST_SHOW_DELAY_S
    ready_timeout_s: float = READY_TIMEOUT_S
    guild_ready_timeout_s: float = GUILD_READY_TIMEOUT_S
    # One REST call, discord.py's own tries included; a create past it may have been delivered.
    request_timeout_s: float = REQUEST_TIMEOUT_S
