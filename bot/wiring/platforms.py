"""What each surface is built from: the chat platforms' own options, the terminal chat, the web
server with its webhooks and admin page, beat's lock, and the in-process schedule that stands in
for beat without a broker. Settings become each part's own frozen options here, so that no
adapter ever reads `Settings`."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.adapters.base import PlatformAdapter, Services
from bot.core.errors import ConfigError
from bot.wiring.backends import replies_place
from bot.wiring.kindred import Kindred, services
from bot.wiring.settings import DiscordSettings, Settings, TelegramSettings, WorkerSettings

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from bot.adapters.console import ConsoleChat, ConsoleIO
    from bot.adapters.discord.options import DiscordOptions
    from bot.adapters.telegram.adapter import TelegramConfig
    from bot.jobs.beat_lock import BeatLock
    from bot.jobs.schedule import InProcessSchedule
    from bot.web.server import WebhookHandler, WebServer


def telegram_config(telegram: TelegramSettings) -> TelegramConfig:
    from bot.adapters.telegram.adapter import TelegramConfig
    from bot.adapters.telegram.chat import ChatPolicy

    if telegram.bot_token is None or not telegram.bot_token.get_secret_value().strip():
        raise ConfigError("invalid configuration: TELEGRAM_BOT_TOKEN: is not set")
    return TelegramConfig(
        token=telegram.bot_token.get_secret_value(),
        api_base_url=telegram.api_base_url,
        webhook_url=telegram.webhook_url,
        webhook_secret=telegram.webhook_secret.get_secret_value() if telegram.webhook_secret else None,
        chat=ChatPolicy(group_mode=telegram.group_mode, feedback_buttons=telegram.feedback_buttons),
        sends_per_second=telegram.sends_per_second,
        webhook_answer_s=telegram.webhook_answer_s,
    )


def discord_options(discord: DiscordSettings) -> DiscordOptions:
    from bot.adapters.discord.options import DiscordOptions

    token = discord.bot_token
    if token is None or not token.get_secret_value().strip():
        raise ConfigError("invalid configuration: DISCORD_BOT_TOKEN: is not set")
    return DiscordOptions(
        token=token,
        dev_guild_id=discord.dev_guild_id,
        feedback_buttons=discord.feedback_buttons,
        message_content=discord.message_content,
    )


async def sync_discord_commands(settings: Settings) -> int:
    """`kindred discord sync`: the slash commands sent to Discord now; returns how many."""
    from bot.adapters.discord.command_sync import sync_now

    return await sync_now(discord_options(settings.discord))


@dataclass
class Platforms:
    """The chat platforms `kindred run` serves, and the webhook routes the web server takes."""

    adapters: list[PlatformAdapter] = field(default_factory=list)
    webhooks: dict[str, WebhookHandler] = field(default_factory=dict)


def configured(settings: Settings) -> bool:
    """Whether any chat platform this process serves has a token."""
    return _serves_telegram(settings) or _serves_discord(settings)


def _serves_telegram(settings: Settings) -> bool:
    return settings.telegram.bot_token is not None and settings.general.serves("telegram")


def _serves_discord(settings: Settings) -> bool:
    return settings.discord.bot_token is not None and settings.general.serves("discord")


def platforms(settings: Settings, shared: Services) -> Platforms:
    found = Platforms()
    if _serves_telegram(settings):
        from bot.adapters.telegram.adapter import TelegramAdapter

        telegram = TelegramAdapter(telegram_config(settings.telegram), shared)
        found.adapters.append(telegram)
        if telegram.config.webhook_path is not None:
            found.webhooks[telegram.config.webhook_path] = telegram.handle_webhook
    if _serves_discord(settings):
        from bot.adapters.discord.adapter import DiscordAdapter

        found.adapters.append(DiscordAdapter(shared, discord_options(settings.discord)))
    return found


def web_server(
    settings: Settings, kindred: Kindred, found: Platforms, health: Callable[[], Awaitable[Mapping[str, Any]]]
) -> WebServer:
    """The web server, not yet started: every webhook, /healthz, and /admin when a password is set."""
    from bot.web.admin import AdminPage
    from bot.web.miniapps.hosting import AppHosting, AppHostingOptions
    from bot.web.server import WebServer, build_web_app
    from bot.web.settings_page import SettingsPage
    from bot.web.telegram_init import secret_key
    from bot.wiring.memory_jobs import reward_weights

    admin = None
    if settings.web.admin_password is not None:
        password = settings.web.admin_password.get_secret_value()
        admin = AdminPage(
            kindred.store,
            kindred.jobs.depths,
            password,
            settings.workers.flower_url,
            proactive=kindred.store.proactive,
            replies=lambda: replies_place(settings.inference.backend, kindred.conversation.inference),
            weights=reward_weights(settings.memory),
            usage=kindred.conversation.usage_report,
        )
    token = settings.telegram.bot_token
    options = AppHostingOptions(
        settings.web.apps_url,
        settings.web.app_state_bytes,
        telegram_key=None if token is None else secret_key(token.get_secret_value()),
    )
    hosting = AppHosting(kindred.store.miniapps, options, rewards=kindred.store.rewards)
    shared = services(kindred)
    links = shared.settings_links
    page = None if links is None else SettingsPage(shared.settings(), links)
    return WebServer(
        build_web_app(webhooks=found.webhooks, health=health, admin=admin, apps=hosting, settings=page)
    )


def in_process_schedule(settings: Settings, kindred: Kindred) -> InProcessSchedule | None:
    """Beat's entries run by this process when jobs run here (no REDIS_URL); with a broker, the
    one `kindred beat` sends them, and this process sends nothing."""
    if settings.workers.redis_url:
        return None
    from bot.jobs.schedule import InProcessSchedule
    from bot.wiring.schedule import schedule_entries

    entries = schedule_entries(settings.workers, settings.training)
    return InProcessSchedule(entries, kindred.jobs.submit)


def spoken_file(settings: Settings, user_id: str) -> Path:
    """Where the terminal writes a person's last spoken reply (a terminal cannot play one); named
    by a digest, so that no id makes a path."""
    name = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]
    return settings.data_dir / "spoken" / f"{name}.ogg"


def console_chat(loading: Awaitable[Kindred], user_id: str, io: ConsoleIO | None = None) -> ConsoleChat:
    """The terminal chat for one person (or a pipe's lines), ready to read before `loading`
    (the companion being built) is done: lines read early are answered once it is."""
    from bot.adapters.console import ChatParts, ConsoleChat, default_io

    async def parts() -> ChatParts:
        kindred = await loading
        shared = services(kindred)
        return ChatParts(
            kindred.conversation,
            shared.controls,
            shared.apps,
            shared.proactive,
            shared.voice,
            shared.images,
            shared.documents,
            shared.spoken,
            spoken_file(kindred.settings, user_id),
        )

    return ConsoleChat(parts(), user_id, io or default_io())


@asynccontextmanager
async def apps_server(settings: Settings, kindred: Kindred) -> AsyncIterator[int | None]:
    """The web server beside a terminal chat, so that the links /app prints open. None when its
    port is taken: a `kindred run` there serves the same store's apps."""

    async def health() -> Mapping[str, Any]:
        return {"platforms": ["console"]}

    server = web_server(settings, kindred, Platforms(), health)
    try:
        port = await server.start(settings.web.host, settings.web.port)
    except OSError as exc:
        log.info("apps are not served from this chat (%s); `kindred run` serves them", exc)
        yield None
        return
    try:
        yield port
    finally:
        await server.stop()


@contextmanager
def beat_lock(workers: WorkerSettings) -> Iterator[BeatLock]:
    """The one-beat lock in Redis, released (when held) and disconnected on the way out."""
    import redis

    from bot.jobs.beat_lock import BeatLock

    assert workers.redis_url is not None
    client = redis.Redis.from_url(workers.redis_url, socket_connect_timeout=5)
    lock = BeatLock(client, workers.beat_lock_ttl_s)
    try:
        yield lock
    finally:
        # Redis may be gone by now; the lock then expires by itself.
        with suppress(Exception):
            lock.release()
        client.close()
