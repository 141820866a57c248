"""Kindred on Discord (discord.py 2.x): DMs, mentions and replies in servers, slash commands,
reactions as feedback. A thin translator over the core; `adapter.DiscordAdapter` is built by the
composition root from its own `options.DiscordOptions`."""
