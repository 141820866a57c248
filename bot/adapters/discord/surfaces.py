"""Where a streamed reply is shown: under a person's message in a channel, or as a slash command's
deferred response and its follow-ups. Both implement `bot.adapters.streaming.Surface`, plus
`attach` for the feedback buttons. Discord's errors become `NotShown` here, in one place."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import aiohttp
import discord

from bot.adapters.delivery import Gone, NotShown

log = logging.getLogger(__name__)


@contextmanager
def refusals_mapped() -> Iterator[None]:
    """Discord refusing a call for good (no permission, channel or message deleted): Gone; any other
    refusal, or Discord unreachable: NotShown."""
    try:
        yield
    except (discord.Forbidden, discord.NotFound) as exc:
        raise Gone(f"Discord answered {exc.status}: {exc.text}") from None
    except discord.HTTPException as exc:
        raise NotShown(f"Discord answered {exc.status}: {exc.text}") from None
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise NotShown(f"could not reach Discord: {type(exc).__name__}") from None


async def shown(step: Awaitable[object]) -> bool:
    """Run one display step outside a reply (a refusal, "typing…"). A failed one is logged, not
    raised: the person's message is still handled."""
    try:
        with refusals_mapped():
            await step
    except NotShown as exc:
        log.warning("could not show a message on Discord: %s", exc)
        return False
    return True


class ReplySurface(Protocol):
    async def send(self, text: str) -> str: ...

    async def edit(self, message_id: str, text: str) -> None: ...

    async def delete(self, message_id: str) -> None: ...

    async def attach(self, message_id: str, view: discord.ui.View) -> None:
        """Add components (buttons) to a message already shown."""
        ...


class ChannelSurface:
    """The first piece replies to the person's message (in a server, so the thread of talk is
    clear); later pieces follow in the same channel."""

    def __init__(self, message: discord.Message) -> None:
        self.message = message
        self._sent: dict[str, discord.Message] = {}

    async def send(self, text: str) -> str:
        with refusals_mapped():
            if not self._sent and self.message.guild is not None:
                sent = await self.message.reply(text, mention_author=False)
            else:
                sent = await self.message.channel.send(text)
        self._sent[str(sent.id)] = sent
        return str(sent.id)

    async def edit(self, message_id: str, text: str) -> None:
        with refusals_mapped():
            self._sent[message_id] = await self._sent[message_id].edit(content=text)

    async def delete(self, message_id: str) -> None:
        with refusals_mapped():
            await self._sent.pop(message_id).delete()

    async def attach(self, message_id: str, view: discord.ui.View) -> None:
        with refusals_mapped():
            self._sent[message_id] = await self._sent[message_id].edit(view=view)


class InteractionSurface:
    """A deferred slash command: the first piece fills the "thinking…" response, later pieces are
    follow-ups. Interaction webhooks need no channel permissions, so this works wherever the app
    is installed."""

    def __init__(self, interaction: discord.Interaction[Any]) -> None:
        self.interaction = interaction
        self._original: str | None = None

    async def send(self, text: str) -> str:
        with refusals_mapped():
            if self._original is None:
                message = await self.interaction.edit_original_response(content=text)
                self._original = str(message.id)
                return self._original
            followup = await self.interaction.followup.send(text, wait=True)
        return str(followup.id)

    async def edit(self, message_id: str, text: str) -> None:
        with refusals_mapped():
            if message_id == self._original:
                await self.interaction.edit_original_response(content=text)
            else:
                await self.interaction.followup.edit_message(int(message_id), content=text)

    async def delete(self, message_id: str) -> None:
        with refusals_mapped():
            if message_id == self._original:
                await self.interaction.delete_original_response()
            else:
                await self.interaction.followup.delete_message(int(message_id))

    async def attach(self, message_id: str, view: discord.ui.View) -> None:
        with refusals_mapped():
            if message_id == self._original:
                await self.interaction.edit_original_response(view=view)
            else:
                await self.interaction.followup.edit_message(int(message_id), view=view)
