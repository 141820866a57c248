"""Proactive messages on Discord, from any process: a discord.py `Client` logged in (REST only) but
never connected to the gateway.

The person's private chat is their DM channel, opened (or found: Discord answers with the same
channel every time) through `Client.create_dm`. Discord's code 50007 ("Cannot send messages to
this user") is a person who blocked the bot, left every shared server or closed their DMs:
`RecipientGone`, and beat marks them inactive. A send that may have been delivered is not sent
again (`failures.py`); its nonce makes Discord drop discord.py's own tries of it.
"""

from __future__ import annotations

import asyncio

import discord

from bot.adapters.discord.failures import (
    FAILURES,
    REQUEST_TIMEOUT_S,
    Verdict,
    described,
    nonce_for,
    verdict,
)
from bot.adapters.discord.policy import chat_key
from bot.core.errors import DeliveryError, RecipientGone
from bot.core.proactive.models import DONT_SUGGEST_AGAIN

PLATFORM = "discord"
CANNOT_MESSAGE_USER = 50007
MAX_CHARS = 2000
# Routed by the gateway client's dynamic item (proactive.NeverAgainButton), whichever process sent it.
NEVER_AGAIN_ID = "kindred:proactive:never"


def _number(key: str) -> int:
    platform, _, number = key.partition(":")
    if platform != PLATFORM or not number.isdigit():
        raise DeliveryError(f"not a Discord id: {key!r}")
    return int(number)


class DiscordMessenger:
    platform = PLATFORM

    def __init__(self, token: str, *, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self._token = token
        self._timeout_s = timeout_s
        self._client: discord.Client | None = None

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def _logged_in(self) -> discord.Client:
        """Logged in by the first message: a beat with nothing to say calls nothing."""
        if self._client is None:
            # No intents and no message cache: this client never connects, so it receives nothing.
            client = discord.Client(intents=discord.Intents.none(), max_messages=None)
            try:
                async with asyncio.timeout(self._timeout_s):
                    await client.login(self._token)
            except discord.LoginFailure:
                await client.close()
                raise DeliveryError("Discord refused the bot's login") from None
            except FAILURES as exc:
                await client.close()
                raise DeliveryError(f"could not log in to Discord: {described(exc)}") from None
            self._client = client
        return self._client

    def reaction_chat(self, chat_id: str) -> str:
        return chat_id  # the key, as feedback.py and reply.py's LinkTo name it

    async def private_chat(self, user_id: str) -> str:
        client = await self._logged_in()
        try:
            async with asyncio.timeout(self._timeout_s):
                channel = await client.create_dm(discord.Object(id=_number(user_id)))
        except FAILURES as exc:
            raise _refused(exc, user_id) from None
        return chat_key(channel.id)

    async def send(self, chat_id: str, text: str, *, never_again: bool = False) -> str:
        client = await self._logged_in()
        view = None
        if never_again:
            view = discord.ui.View(timeout=None)
            view.add_item(discord.ui.Button(label=DONT_SUGGEST_AGAIN, custom_id=NEVER_AGAIN_ID))
            # Presses reach the gateway client, never this one: a stopped view is not kept here.
            view.stop()
        content = text[:MAX_CHARS]
        # The beat sends one occasion once; the same words to the same chat are that occasion.
        nonce = nonce_for(f"{chat_id}:{content}", 0)
        try:
            async with asyncio.timeout(self._timeout_s):
                channel = client.get_partial_messageable(_number(chat_id))
                if view is None:
                    message = await channel.send(content, nonce=nonce)
                else:
                    message = await channel.send(content, view=view, nonce=nonce)
        except FAILURES as exc:
            raise _refused(exc, chat_id) from None
        return str(message.id)


def _refused(exc: BaseException, where: str) -> DeliveryError:
    if isinstance(exc, discord.HTTPException) and exc.code == CANNOT_MESSAGE_USER:
        return RecipientGone(f"Discord refused {where}: {exc.text}")
    found = verdict(exc)
    if found is Verdict.MAYBE_DELIVERED:
        return DeliveryError(f"{found} to {where}, not sent again: {described(exc)}")
    return DeliveryError(f"Discord did not take the message ({found}): {described(exc)}")
