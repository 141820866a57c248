"""`kindred chat --user NAME`: talk to Kindred in this terminal, or answer the lines of a pipe."""

from __future__ import annotations

import argparse
import asyncio
import sys

from bot.wiring.kindred import Kindred, build, load_personas
from bot.wiring.platforms import apps_server, console_chat
from bot.wiring.settings import Settings


async def chat(settings: Settings, args: argparse.Namespace) -> int:
    # A broken personas file is the one error before the prompt, since nothing has started yet.
    personas = load_personas(settings)
    # Then the prompt; the store and the models load behind it (see ConsoleChat).
    loading = asyncio.create_task(build(settings, personas=personas))
    done = asyncio.Event()
    apps = asyncio.create_task(_serve_apps(settings, loading, done))
    try:
        await console_chat(loading, args.user).run()
    finally:
        done.set()
        # The chat may end (end of input, /quit, Ctrl-C) before the loading does: it is waited
        # for, so that the store and the model threads are closed, not abandoned.
        kindred = await asyncio.shield(loading)
        await apps
        for path in await kindred.close():
            print(f"kindred: the store was unavailable; unsaved words are in {path}", file=sys.stderr)
    return 0


async def _serve_apps(settings: Settings, loading: asyncio.Task[Kindred], done: asyncio.Event) -> None:
    """The web server beside the chat, once the store is open, so that the links /app prints
    open; stopped when the chat ends. A failed load is the chat's error, reported there."""
    try:
        kindred = await asyncio.shield(loading)
    except Exception:
        return
    if done.is_set():
        return
    async with apps_server(settings, kindred):
        await done.wait()
