"""`kindred run`: every configured chat platform and the web server, in one process, until a signal."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.adapters.base import PlatformAdapter
from bot.core.chat.outbox import keep_flushing
from bot.core.errors import PlatformUnreachable
from bot.wiring.kindred import Kindred, build, services
from bot.wiring.platforms import Platforms, configured, in_process_schedule, platforms, web_server
from bot.wiring.settings import Settings

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 30.0
# How often writes that wait for the store (it was down) are retried while nobody writes.
RETRY_WRITES_S = 5.0
MAX_RETRY_DELAY_S = 30.0
NO_PLATFORM = (
    "kindred: no chat platform is configured, so only the web server runs (mini-apps, /admin, "
    "/healthz). Set TELEGRAM_BOT_TOKEN and/or DISCORD_BOT_TOKEN (see docs/telegram.md and "
    "docs/discord.md), or chat in this terminal with `kindred chat --user NAME`."
)


@dataclass(frozen=True)
class StartRetry:
    """How often, and how patiently, a platform that cannot be reached is tried again at start."""

    attempts: int = 8
    first_delay_s: float = 1.0
    max_delay_s: float = MAX_RETRY_DELAY_S

    def delay_s(self, attempt: int) -> float:
        return float(min(self.first_delay_s * 2 ** (attempt - 1), self.max_delay_s))


async def run(settings: Settings, args: argparse.Namespace) -> int:
    return await serve(settings)


async def start_with_retries(adapter: PlatformAdapter, retry: StartRetry, stop: asyncio.Event) -> bool:
    """Start `adapter`, trying again with backoff while its platform is unreachable.

    True once it serves; False if a stop came while waiting. A refused token (ConfigError) and any
    other error fail at once; the last unreachable attempt raises PlatformUnreachable.
    """
    for attempt in range(1, retry.attempts + 1):
        try:
            await adapter.start()
        except PlatformUnreachable as exc:
            if attempt == retry.attempts:
                raise PlatformUnreachable(f"{exc}; gave up after {attempt} attempts") from None
            delay = retry.delay_s(attempt)
            # The adapters' messages name the error's type only, never a URL (it holds the token).
            log.warning("%s: attempt %d of %d; trying again in %.1f s", exc, attempt, retry.attempts, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            if stop.is_set():
                return False
        else:
            if attempt > 1:
                log.warning("%s: connected on attempt %d", adapter.name, attempt)
            return True
    return False


async def serve(
    settings: Settings,
    *,
    stop: asyncio.Event | None = None,
    open_companion: Callable[[Settings], Awaitable[Kindred]] = build,
) -> int:
    """Serve until `stop` (or SIGINT/SIGTERM); every part started is stopped again, whatever failed.
    `open_companion`: builds the companion (a benchmark's builds it with its load fixtures)."""
    if not configured(settings):
        # The apps' links and /admin must keep working without a chat platform: say so, serve on.
        print(NO_PLATFORM, file=sys.stderr)
    stop = stop or _stop_on_signals()
    kindred = await open_companion(settings)
    found = platforms(settings, services(kindred))

    async def health() -> Mapping[str, Any]:
        return _health(kindred, found)

    web = web_server(settings, kindred, found, health)
    schedule = in_process_schedule(settings, kindred)
    started: list[PlatformAdapter] = []
    retrying: asyncio.Task[None] | None = None
    retry = StartRetry(settings.general.start_attempts, settings.general.start_backoff_s)
    try:
        # The web server first: Telegram may post to the webhook the moment it is set.
        await web.start(settings.web.host, settings.web.port)
        for adapter in found.adapters:
            if not await start_with_retries(adapter, retry, stop):
                break
            started.append(adapter)
        if not stop.is_set():
            if schedule is not None:
                schedule.start()  # no broker, so no beat: the nightly jobs run from here
            retrying = asyncio.create_task(
                keep_flushing(kindred.conversation.outbox, kindred.store.turns, RETRY_WRITES_S)
            )
            names = ", ".join(a.name for a in found.adapters) or "the web server only"
            print(f"kindred: serving {names} on port {web.port}; Ctrl-C stops", file=sys.stderr)
            await stop.wait()
    finally:
        if retrying is not None:
            retrying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await retrying
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
    unsaved = len(kindred.conversation.outbox)
    return {"platforms": names, "unsaved": unsaved, "shared_state": kindred.shared.where}


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop
