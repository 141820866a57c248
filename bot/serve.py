"""`kindred run`: every configured chat platform and the web server, in one process, until a signal."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import partial
from typing import Any

from bot.adapters.base import PlatformAdapter
from bot.app import Kindred, build, services
from bot.config import Settings
from bot.web.admin import AdminPage
from bot.web.app import WebhookHandler, WebServer, build_web_app

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 30.0
NO_PLATFORM = (
    "kindred: no chat platform is configured. Set TELEGRAM_BOT_TOKEN and/or DISCORD_BOT_TOKEN "
    "(see README), or chat in this terminal with `kindred chat --user NAME`."
)


async def serve(settings: Settings, *, stop: asyncio.Event | None = None) -> int:
    if settings.telegram_bot_token is None and settings.discord_bot_token is None:
        print(NO_PLATFORM, file=sys.stderr)
        return 2
    stop = stop or _stop_on_signals()
    kindred = await build(settings)
    adapters, webhooks = _adapters(settings, kindred)
    health = partial(_health, kindred, adapters)
    web = WebServer(build_web_app(webhooks=webhooks, health=health, admin=_admin(settings, kindred)))
    started: list[PlatformAdapter] = []
    try:
        # The web server first: Telegram may post to the webhook the moment it is set.
        await web.start(settings.web_host, settings.web_port)
        for adapter in adapters:
            await adapter.start()
            started.append(adapter)
        print(f"kindred: serving {', '.join(a.name for a in adapters)}; Ctrl-C stops", file=sys.stderr)
        await stop.wait()
    finally:
        for adapter in reversed(started):
            try:
                # A platform that hangs on its way out must not keep unsaved words from the spill.
                await asyncio.wait_for(adapter.stop(), STOP_TIMEOUT_S)
            except Exception as exc:
                log.warning("%s did not stop cleanly: %s", adapter.name, type(exc).__name__)
        await web.stop()
        await _close(settings, kindred)
    return 0


Wiring = tuple[list[PlatformAdapter], dict[str, WebhookHandler]]


def _adapters(settings: Settings, kindred: Kindred) -> Wiring:
    shared = services(kindred)
    adapters: list[PlatformAdapter] = []
    webhooks: dict[str, WebhookHandler] = {}
    if settings.telegram_bot_token is not None:
        from bot.adapters.telegram import build_telegram

        telegram = build_telegram(settings, shared)
        adapters.append(telegram)
        if telegram.config.webhook_path is not None:
            webhooks[telegram.config.webhook_path] = telegram.handle_webhook
    if settings.discord_bot_token is not None:
        from bot.adapters.discord import build_discord

        adapters.append(build_discord(settings, shared))
    return adapters, webhooks


def _admin(settings: Settings, kindred: Kindred) -> AdminPage | None:
    if settings.admin_password is None:
        return None
    password = settings.admin_password.get_secret_value()
    return AdminPage(kindred.store, kindred.jobs.depths, password, settings.flower_url)


async def _health(kindred: Kindred, adapters: list[PlatformAdapter]) -> Mapping[str, Any]:
    return {"platforms": [adapter.name for adapter in adapters], "unsaved": len(kindred.conversation.outbox)}


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def _close(settings: Settings, kindred: Kindred) -> None:
    await kindred.conversation.flush()
    if len(kindred.conversation.outbox):
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        for path in kindred.conversation.outbox.spill(settings.data_dir / "unsaved", stamp):
            log.warning("the store was unavailable; unsaved words are in %s", path)
    await kindred.close()
