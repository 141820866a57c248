"""Start and stop the Discord client as a PlatformAdapter. Receiving events is discord.py's
gateway loop, run as a background task; handling them is the client's."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import aiohttp
import discord

from bot.adapters.base import Services
from bot.adapters.discord.client import KindredClient
from bot.adapters.discord.context import Kindred
from bot.adapters.discord.options import DiscordOptions
from bot.core.errors import ConfigError, KindredError, PlatformUnreachable

log = logging.getLogger(__name__)

# stop() gives replies being written this long to finish before it disconnects.
DRAIN_S = 10.0
AUTHENTICATION_FAILED = 4004  # the gateway's close code for a token it does not accept
REJECTED = "invalid configuration: DISCORD_BOT_TOKEN: Discord rejected the token"
NO_INTENT = (
    "invalid configuration: KINDRED_DISCORD_MESSAGE_CONTENT: the Message Content intent is not "
    "enabled for this bot in the Developer Portal (enable it, or turn the setting off)"
)


class DiscordAdapter:
    name = "discord"

    def __init__(self, services: Services, options: DiscordOptions) -> None:
        self.options = options
        self.kindred = Kindred(services, options)
        self.client = KindredClient(self.kindred)
        self._gateway: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Log in, sync the slash commands, connect; returns once Discord reports READY. A failed
        start leaves nothing open, and the adapter can start again."""
        if self.client.is_closed():
            self.client = KindredClient(self.kindred)  # a closed discord.py client cannot log in again
        await self._login()
        self._gateway = asyncio.create_task(self.client.connect(), name="kindred-discord-gateway")
        ready = asyncio.create_task(self.client.wait_until_ready())
        done, _ = await asyncio.wait(
            {self._gateway, ready}, timeout=self.options.ready_timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
        if ready in done:
            return
        ready.cancel()
        failure = self._gateway.exception() if self._gateway in done else None
        await self.stop()
        if isinstance(failure, discord.PrivilegedIntentsRequired):
            raise ConfigError(NO_INTENT) from None
        if isinstance(failure, discord.ConnectionClosed) and failure.code == AUTHENTICATION_FAILED:
            raise ConfigError(REJECTED) from None
        timeout_s = self.options.ready_timeout_s
        reason = type(failure).__name__ if failure else f"no READY within {timeout_s:.0f} s"
        raise PlatformUnreachable(f"could not connect to Discord: {reason}")

    async def _login(self) -> None:
        try:
            await self.client.login(self.options.token.get_secret_value())
        except discord.LoginFailure:
            await self.client.close()
            raise ConfigError(REJECTED) from None
        except (discord.DiscordServerError, aiohttp.ClientError, OSError) as exc:
            await self.client.close()
            raise PlatformUnreachable(f"could not reach Discord: {type(exc).__name__}") from None
        except discord.HTTPException as exc:  # a 4xx other than the token: retrying will not help
            await self.client.close()
            raise KindredError(f"Discord refused the start: {type(exc).__name__} {exc.status}") from None
        except BaseException:
            await self.client.close()
            raise

    async def stop(self) -> None:
        unfinished = await self.kindred.in_flight.drain(DRAIN_S)
        if unfinished:
            log.warning("stopping with %d Discord replies unfinished; their turns are stored", unfinished)
        await self.client.close()
        if self._gateway is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._gateway, timeout=5.0)
            self._gateway = None
