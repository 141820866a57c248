"""Proactive messages on Discord, from any process: discord.py's HTTP client alone, no gateway.

The person's private chat is their DM channel, opened (or found: Discord answers with the same
channel every time) through the REST API. Discord's code 50007 ("Cannot send messages to this
user") is a person who blocked the bot, left every shared server or closed their DMs:
`RecipientGone`, and beat marks them inactive.
"""

from __future__ import annotations

import asyncio

import discord
from discord.http import HTTPClient, handle_message_parameters

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

    def __init__(self, token: str) -> None:
        self._token = token
        self._http: HTTPClient | None = None

    async def close(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.close()

    async def _client(self) -> HTTPClient:
        """Logged in by the first message: a beat with nothing to say calls nothing."""
        if self._http is None:
            http = HTTPClient(asyncio.get_running_loop())
            try:
                await http.static_login(self._token)
            except discord.HTTPException as exc:
                await http.close()
                raise DeliveryError(f"Discord refused the bot's login: {exc.status}") from exc
            self._http = http
        return self._http

    async def private_chat(self, user_id: str) -> str:
        try:
            channel = await (await self._client()).start_private_message(_number(user_id))
        except discord.HTTPException as exc:
            raise _refused(exc, user_id) from exc
        return chat_key(int(channel["id"]))

    async def send(self, chat_id: str, text: str, *, never_again: bool = False) -> str:
        view = None
        if never_again:
            view = discord.ui.View(timeout=None)
            view.add_item(discord.ui.Button(label=DONT_SUGGEST_AGAIN, custom_id=NEVER_AGAIN_ID))
        params = handle_message_parameters(content=text[:MAX_CHARS], view=view)
        try:
            message = await (await self._client()).send_message(_number(chat_id), params=params)
        except discord.HTTPException as exc:
            raise _refused(exc, chat_id) from exc
        return str(message["id"])


def _refused(exc: discord.HTTPException, where: str) -> DeliveryError:
    if exc.code == CANNOT_MESSAGE_USER:
        return RecipientGone(f"Discord refused {where}: {exc.text}")
    return DeliveryError(f"Discord did not take the message: {exc.status} {exc.text}")
