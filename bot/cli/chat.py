"""`kindred chat --user NAME`: talk to Kindred in this terminal, or answer the lines of a pipe."""

from __future__ import annotations

import argparse
import sys

from bot.app.kindred import build
from bot.app.platforms import apps_server, console_chat
from bot.app.settings import Settings


async def chat(settings: Settings, args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        print("Starting Kindred… (the very first start prepares the model: about 20 s)", file=sys.stderr)
    kindred = await build(settings)
    try:
        async with apps_server(settings, kindred):  # the links /app prints must open
            await console_chat(kindred, args.user).run()
    finally:
        for path in await kindred.close():
            print(f"kindred: the store was unavailable; unsaved words are in {path}", file=sys.stderr)
    return 0
