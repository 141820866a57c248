"""`kindred run`: every configured chat platform and the web server, in one process, until a signal."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Mapping
from typing import Any

from bot.adapters.base import PlatformAdapter
from bot.app.kindred import Kindred, build, services
from bot.app.platforms import Platforms, configured, in_process_schedule, platforms, web_server
from bot.app.settings import Settings

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 30.0
NO_PLATFORM = (
    "kindred: no chat platform is configured, so only the web server runs (mini-apps, /admin, "
    "/healthz). Set TELEGRAM_BOT_TOKEN and/or DISCORD_BOT_TOKEN (see docs/telegram.md and "
    "docs/discord.md), or chat in this terminal with `kindred chat --user NAME`."
)


async def run(settings: Settings, args: argparse.Namespace) -> int:
    return await serve(settings)


async def serve(settings: Settings, *, stop: asyncio.Event | None = None) -> int:
    if not configured(settings):
        # The apps' links and /admin must keep working without a chat platform: say so, serve on.
        print(NO_PLATFORM, file=sys.stderr)
    stop = stop or _stop_on_signals()
    kindred = await build(settings)
    found = platforms(settings, services(kindred))

    async def health() -> Mapping[str, Any]:
        return _health(kindred, found)

    web = web_server(settings, kindred, found, health)
    schedule = in_process_schedule(settings, kindred)
    started: list[PlatformAdapter] = []
    try:
        # The web server first: Telegram may post to the webhook the moment it is set.
        await web.start(settings.web.host, settings.web.port)
        for adapter in found.adapters:
            await adapter.start()
            started.append(adapter)
        if schedule is not None:
            schedule.start()  # no broker, so no beat: the nightly jobs run from here
        names = ", ".join(a.name for a in found.adapters) or "the web server only"
        print(f"kindred: serving {names} on port {web.port}; Ctrl-C stops", file=sys.stderr)
        await stop.wait()
    finally:
        if schedule is not None:
            await schedule.close()
        for adapter in reversed(started):
            try:
                # A platform that hangs on its way out must not keep unsaved words from the spill.
                await asyncio.wait_for(adapter.stop(), STOP_TIMEOUT_S)
            except Exception as exc:
                log.warning("%s did not stop cleanly: %s", adapter.name, type(exc).__name__)
        await web.stop()
        for path in await kindred.close():
            log.warning("the store was unavailable; unsaved words are in %s", path)
    return 0


def _health(kindred: Kindred, found: Platforms) -> Mapping[str, Any]:
    names = [adapter.name for adapter in found.adapters]
    return {"platforms": names, "unsaved": len(kindred.conversation.outbox)}


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop
