"""`kindred discord sync`: send the slash commands to Discord now, changed or not. `kindred run`
syncs at start only when they changed (Discord rate-limits syncing)."""

from __future__ import annotations

import argparse
from typing import Any

from bot.wiring.settings import Settings


def add_commands(commands: Any) -> None:
    """Register `discord` on `kindred`'s subparsers."""
    discord = commands.add_parser("discord", help="Discord: sync the slash commands now")
    verbs = discord.add_subparsers(dest="verb", required=True)
    verbs.add_parser("sync", help="send the slash commands to Discord now, even when unchanged")


async def sync(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.platforms import sync_discord_commands

    synced = await sync_discord_commands(settings)
    guild = settings.discord.dev_guild_id
    print(f"synced {synced} slash commands " + (f"to guild {guild}" if guild else "globally"))
    return 0
