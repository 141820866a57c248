"""The discord.py client: the intents Kindred needs, the command sync (when the commands changed),
and the gateway events it listens to. Each event is handed to the module that translates it;
nothing is decided here."""

from __future__ import annotations

import logging

import discord

from bot.adapters.discord import command_sync
from bot.adapters.discord.commands import BUTTONS, command_tree
from bot.adapters.discord.context import Kindred
from bot.adapters.discord.feedback import FeedbackButton, reaction_event
from bot.adapters.discord.messages import ChannelMessages
from bot.adapters.discord.resend import ResendButton

log = logging.getLogger(__name__)


def needed_intents(*, message_content: bool) -> discord.Intents:
    """The smallest set that serves DMs, mentions, replies and reactions.

    Without the privileged message_content intent Discord still sends the text of DMs and of
    messages that mention Kindred; slash commands never need it. With it, a reply to Kindred
    that does not ping it can be read too.
    """
    intents = discord.Intents.none()
    intents.guilds = True  # servers and channels, so replies and permissions resolve
    intents.guild_messages = True  # mentions of and replies to Kindred in servers
    intents.dm_messages = True
    intents.guild_reactions = True  # feedback on replies
    intents.dm_reactions = True
    intents.message_content = message_content
    return intents


class KindredClient(discord.Client):
    def __init__(self, kindred: Kindred) -> None:
        super().__init__(
            intents=needed_intents(message_content=kindred.options.message_content),
            guild_ready_timeout=kindred.options.guild_ready_timeout_s,
            # A reply never pings @everyone, a role or a person, whatever the model writes.
            allowed_mentions=discord.AllowedMentions.none(),
        )
        self.kindred = kindred
        self.tree = command_tree(self)
        self._messages = ChannelMessages(kindred)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(FeedbackButton, ResendButton, *BUTTONS)
        # Runs inside login(), before the gateway connects.
        await command_sync.sync(self.tree, self.kindred.options.dev_guild_id)

    async def on_ready(self) -> None:
        log.info("connected to Discord as %s in %d servers", self.user, len(self.guilds))

    async def on_message(self, message: discord.Message) -> None:
        if self.user is not None:
            await self._messages.handle(self.user, message)

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        if self.user is not None:
            await reaction_event(self.kindred, self.user.id, payload)

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        if self.user is not None:
            await reaction_event(self.kindred, self.user.id, payload)
