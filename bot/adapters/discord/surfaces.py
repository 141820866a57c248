"""Where a streamed reply is shown: under a person's message in a channel, or as a slash command's
deferred response and its follow-ups. Both implement `bot.adapters.streaming.Surface`, plus
`attach` for the feedback buttons. Every call goes through `failures.discord_call`, which turns
Discord's errors into `NotShown` by what they tell about delivery."""

from __future__ import annotations

import io
import logging
from collections.abc import Awaitable
from typing import Any, Protocol

import discord

from bot.adapters.delivery import NotShown
from bot.adapters.discord.failures import REQUEST_TIMEOUT_S, discord_call
from bot.core.media.models import Speech

log = logging.getLogger(__name__)


async def shown(step: Awaitable[object], *, timeout_s: float = REQUEST_TIMEOUT_S) -> bool:
    """Run one display step outside a reply (a refusal, "typing…"). A failed one is logged, not
    raised: the person's message is still handled."""
    try:
        async with discord_call(timeout_s):
            await step
    except NotShown as exc:
        log.warning("could not show a message on Discord: %s", exc)
        return False
    return True


class ReplySurface(Protocol):
    async def send(self, text: str, *, nonce: str) -> str:
        """Create a message; `nonce` makes Discord answer a repeat of it with the first one."""
        ...

    async def edit(self, message_id: str, text: str) -> None: ...

    async def delete(self, message_id: str) -> None: ...

    async def attach(self, message_id: str, view: discord.ui.View) -> None:
        """Add components (buttons) to a message already shown."""
        ...

    async def send_voice(self, speech: Speech) -> str:
        """The reply said aloud, as an audio attachment after it."""
        ...

    async def say(self, text: str) -> None: ...


def audio_file(speech: Speech) -> discord.File:
    return discord.File(io.BytesIO(speech.data), filename=speech.filename, description="the reply, spoken")


class ChannelSurface:
    """The first piece replies to the person's message (in a server, so the thread of talk is
    clear); later pieces follow in the same channel."""

    def __init__(self, message: discord.Message, *, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.message = message
        self.timeout_s = timeout_s
        self._sent: dict[str, discord.Message] = {}

    async def send(self, text: str, *, nonce: str) -> str:
        async with discord_call(self.timeout_s):
            if not self._sent and self.message.guild is not None:
                sent = await self.message.reply(text, mention_author=False, nonce=nonce)
            else:
                sent = await self.message.channel.send(text, nonce=nonce)
        self._sent[str(sent.id)] = sent
        return str(sent.id)

    async def edit(self, message_id: str, text: str) -> None:
        async with discord_call(self.timeout_s):
            self._sent[message_id] = await self._sent[message_id].edit(content=text)

    async def delete(self, message_id: str) -> None:
        async with discord_call(self.timeout_s):
            await self._sent.pop(message_id).delete()

    async def attach(self, message_id: str, view: discord.ui.View) -> None:
        async with discord_call(self.timeout_s):
            self._sent[message_id] = await self._sent[message_id].edit(view=view)

    async def send_voice(self, speech: Speech) -> str:
        async with discord_call(self.timeout_s):
            sent = await self.message.channel.send(file=audio_file(speech))
        return str(sent.id)

    async def say(self, text: str) -> None:
        async with discord_call(self.timeout_s):
            await self.message.channel.send(text)


class InteractionSurface:
    """A deferred slash command: the first piece fills the "thinking…" response, later pieces are
    follow-ups. Interaction webhooks need no channel permissions, so this works wherever the app
    is installed."""

    def __init__(
        self, interaction: discord.Interaction[Any], *, timeout_s: float = REQUEST_TIMEOUT_S
    ) -> None:
        self.interaction = interaction
        self.timeout_s = timeout_s
        self._original: str | None = None

    async def send(self, text: str, *, nonce: str) -> str:
        """The original response is an edit; a follow-up is a webhook message, which takes no nonce
        (docs/discord.md: the risk that remains)."""
        async with discord_call(self.timeout_s):
            if self._original is None:
                message = await self.interaction.edit_original_response(content=text)
                self._original = str(message.id)
                return self._original
            followup = await self.interaction.followup.send(text, wait=True)
        return str(followup.id)

    async def edit(self, message_id: str, text: str) -> None:
        async with discord_call(self.timeout_s):
            if message_id == self._original:
                await self.interaction.edit_original_response(content=text)
            else:
                await self.interaction.followup.edit_message(int(message_id), content=text)

    async def delete(self, message_id: str) -> None:
        async with discord_call(self.timeout_s):
            if message_id == self._original:
                await self.interaction.delete_original_response()
            else:
                await self.interaction.followup.delete_message(int(message_id))

    async def attach(self, message_id: str, view: discord.ui.View) -> None:
        async with discord_call(self.timeout_s):
            if message_id == self._original:
                await self.interaction.edit_original_response(view=view)
            else:
                await self.interaction.followup.edit_message(int(message_id), view=view)

    async def send_voice(self, speech: Speech) -> str:
        async with discord_call(self.timeout_s):
            followup = await self.interaction.followup.send(file=audio_file(speech), wait=True)
        return str(followup.id)

    async def say(self, text: str) -> None:
        async with discord_call(self.timeout_s):
            await self.interaction.followup.send(text)
