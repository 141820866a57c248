"""Kindred on Discord (discord.py 2.x): DMs, mentions and replies in servers, slash commands,
reactions as feedback. A thin translator over the core; see SETUP.md for the Developer Portal."""

from __future__ import annotations

from bot.adapters.base import PlatformAdapter, Services
from bot.adapters.discord.adapter import DiscordAdapter
from bot.adapters.discord.options import DiscordOptions
from bot.config import Settings

__all__ = ["DiscordAdapter", "DiscordOptions", "build_discord"]


def build_discord(settings: Settings, services: Services) -> PlatformAdapter:
    """The Discord adapter for these settings. Raises ConfigError when DISCORD_BOT_TOKEN is unset."""
    return DiscordAdapter(services, DiscordOptions.from_settings(settings))
