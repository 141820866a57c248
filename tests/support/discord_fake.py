"""Discord on loopback: the fake gateway and REST API on one aiohttp server, pointed at by
discord.py's own class attributes (`Route.BASE`, `DiscordWebSocket.DEFAULT_GATEWAY`), and the
actions a test plays as people: write, mention, use a slash command, press a button, react."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
import yarl
from aiohttp import web
from discord.gateway import DiscordWebSocket
from discord.http import Route

from tests.support import discord_payloads as p
from tests.support.discord_gateway import FakeGateway
from tests.support.discord_rest import FakeRest, Shown
from tests.support.waiting import wait_until

ANN = p.user(5_000_000_000_000_000_001, "ann")
BEN = p.user(5_000_000_000_000_000_002, "ben")


class FakeDiscord:
    def __init__(self, port: int = 0) -> None:
        """`port`: where to listen (a test that starts it late knows its URL beforehand); 0: any."""
        self.guild_channel = p.text_channel(p.GUILD_CHANNEL_ID, p.GUILD_ID)
        self.gateway = FakeGateway({p.GUILD_ID: [self.guild_channel]})
        # A member's permissions in the server, by user id, where not everything ("0": none).
        self.member_permissions: dict[str, str] = {}
        self.rest = FakeRest(self.gateway, {p.GUILD_CHANNEL_ID: p.GUILD_ID})
        self.port = port
        self.url = f"http://127.0.0.1:{port}" if port else ""
        self.gateway.base_url = f"ws://127.0.0.1:{port}" if port else ""
        self._runner: web.AppRunner | None = None
        # What people attached, by its CDN path, and each path fetched, in order.
        self.attachments: dict[str, bytes] = {}
        self.downloads: list[str] = []

    async def start(self) -> None:
        app = web.Application(middlewares=[self.rest.middleware])
        app.add_routes([*self.gateway.routes(), *self.rest.routes()])
        app.router.add_get("/attachments/{channel}/{attachment}/{name}", self._cdn)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        self.gateway.base_url = f"ws://127.0.0.1:{port}"

    def point_discord_py_here(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(Route, "BASE", f"{self.url}/api/v10")
        monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(f"{self.gateway.base_url}/gateway"))

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # What people do.

    async def dm(self, person: p.Payload, text: str) -> p.Payload:
        channel_id = dm_channel_id(person)
        message = p.message(p.snowflake(), channel_id, person, text)
        await self.gateway.dispatch("MESSAGE_CREATE", message)
        return message

    async def voice_dm(self, person: p.Payload, data: bytes, **attached: Any) -> p.Payload:
        """A voice message (or, with `voice_message=False`, an audio file) in the bot's DM."""
        channel_id = dm_channel_id(person)
        message = p.message(p.snowflake(), channel_id, person, str(attached.pop("text", "")))
        message["attachments"] = [self._attach(channel_id, data, **attached)]
        await self.gateway.dispatch("MESSAGE_CREATE", message)
        return message

    async def voice_in_server(
        self, person: p.Payload, data: bytes, *, mention: bool = False, **attached: Any
    ) -> p.Payload:
        message = p.message(
            p.snowflake(), p.GUILD_CHANNEL_ID, person, f"<@{p.BOT_ID}>" if mention else "",
            guild_id=p.GUILD_ID, mentions=[p.BOT_USER] if mention else [],
        )  # fmt: skip
        message["attachments"] = [self._attach(p.GUILD_CHANNEL_ID, data, **attached)]
        await self.gateway.dispatch("MESSAGE_CREATE", message)
        return message

    def _attach(
        self,
        channel_id: int,
        data: bytes,
        *,
        voice_message: bool = True,
        filename: str = "voice-message.ogg",
        content_type: str = "audio/ogg",
        duration: float = 2.0,
        size: int | None = None,
        deleted: bool = False,
    ) -> p.Payload:
        """An attachment as Discord describes it; a voice message has a duration and a waveform.
        `deleted`: gone from the CDN before anyone fetches it (404)."""
        attachment_id = p.snowflake()
        path = f"{channel_id}/{attachment_id}/{filename}"
        if not deleted:
            self.attachments[path] = data
        url = f"{self.url}/attachments/{path}"
        found: p.Payload = {
            "id": str(attachment_id), "filename": filename, "size": len(data) if size is None else size,
            "url": url, "proxy_url": url, "content_type": content_type,
        }  # fmt: skip
        if voice_message:
            found |= {"duration_secs": duration, "waveform": "AAAAAAAAAAAA", "flags": 8192}
        return found

    async def _cdn(self, request: web.Request) -> web.Response:
        path = "/".join(request.match_info[key] for key in ("channel", "attachment", "name"))
        if path not in self.attachments:
            return web.Response(status=404, text="Not Found")
        self.downloads.append(path)
        return web.Response(body=self.attachments[path], content_type="application/octet-stream")

    async def say_in_server(
        self, person: p.Payload, text: str, *, mention: bool = False, replying_to: p.Payload | None = None
    ) -> p.Payload:
        content = f"<@{p.BOT_ID}> {text}" if mention else text
        message = p.message(
            p.snowflake(),
            p.GUILD_CHANNEL_ID,
            person,
            content,
            guild_id=p.GUILD_ID,
            mentions=[p.BOT_USER] if mention else [],
            replying_to=replying_to,
        )
        await self.gateway.dispatch("MESSAGE_CREATE", message)
        return message

    async def slash(self, person: p.Payload, name: str, *, where: str = "dm", **options: str) -> str:
        """Use /name; `where`: "dm" (the bot's DM), "server" (the bot's server) or "elsewhere" (a
        server the bot is not in, through a user install). Returns the interaction token."""
        return await self._interact(2, p.slash(name, **options), person, where)

    async def autocomplete(self, person: p.Payload, name: str, option: str, typed: str) -> list[p.Payload]:
        """Type `typed` into /name's `option` in the bot's DM; the choices Kindred offers."""
        data = p.slash(name, **{option: typed})
        data["options"][0]["focused"] = True
        token = await self._interact(4, data, person, "dm")
        await wait_until(lambda: token in self.rest.autocompleted, what="the autocomplete's choices")
        return self.rest.autocompleted[token]

    async def press(self, person: p.Payload, shown: Shown, custom_id: str, *, where: str = "dm") -> str:
        message = self.rest.payload(shown)
        return await self._interact(3, p.button(custom_id), person, where, message=message)

    async def choose(
        self, person: p.Payload, shown: Shown, custom_id: str, value: str, *, where: str = "dm"
    ) -> str:
        """Pick `value` in the select menu `custom_id` on Kindred's message `shown`."""
        message = self.rest.payload(shown)
        return await self._interact(3, p.select_menu(custom_id, [value]), person, where, message=message)

    async def _interact(
        self, kind: int, data: p.Payload, person: p.Payload, where: str, message: p.Payload | None = None
    ) -> str:
        if where == "server":
            channel, guild_id = self.guild_channel, p.GUILD_ID
        elif where == "elsewhere":
            channel, guild_id = p.text_channel(p.FOREIGN_CHANNEL_ID, p.FOREIGN_GUILD_ID), p.FOREIGN_GUILD_ID
        else:
            channel, guild_id = p.dm_channel(dm_channel_id(person), person), None
        payload = p.interaction(
            kind,
            data,
            person,
            channel,
            guild_id=guild_id,
            installed_by_user=where != "server",
            message=message,
        )
        if "member" in payload and person["id"] in self.member_permissions:
            payload["member"]["permissions"] = self.member_permissions[person["id"]]
        self.rest.interactions[payload["token"]] = payload
        await self.gateway.dispatch("INTERACTION_CREATE", payload)
        return str(payload["token"])

    async def react(
        self, person: p.Payload, target: Shown | p.Payload, emoji: str, *, added: bool = True
    ) -> None:
        """Add (or take away) a reaction on one of Kindred's messages or on anyone's message."""
        if isinstance(target, Shown):
            channel_id, message_id = target.channel_id, target.id
        else:
            channel_id, message_id = int(target["channel_id"]), int(target["id"])
        event = "MESSAGE_REACTION_ADD" if added else "MESSAGE_REACTION_REMOVE"
        payload = p.reaction(
            int(person["id"]), channel_id, message_id, emoji, guild_id=self.rest.guild_of.get(channel_id)
        )
        await self.gateway.dispatch(event, payload)

    # What people see.

    def in_channel(self, channel_id: int) -> list[Shown]:
        return [shown for shown in self.rest.messages.values() if shown.channel_id == channel_id]

    def answers(self, token: str) -> list[Shown]:
        """The original response to an interaction, then its follow-ups."""
        return [shown for shown in self.rest.messages.values() if shown.token == token]

    def replies_to(self, message: p.Payload) -> list[Shown]:
        """Kindred's messages posted after `message` in its channel."""
        channel_id, after = int(message["channel_id"]), int(message["id"])
        return [shown for shown in self.in_channel(channel_id) if shown.id > after and shown.token is None]


def dm_channel_id(person: p.Payload) -> int:
    return p.dm_channel_of(int(person["id"]))


async def settled(check: Callable[[], bool], *, for_s: float = 0.3) -> bool:
    """True when `check()` still holds after `for_s`: for "nothing happened" assertions."""
    await asyncio.sleep(for_s)
    return check()
