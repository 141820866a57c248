"""The slash commands reach Discord only when they changed: a sync is rate-limited by Discord, so a
restart loop that synced at every start would lock the commands out.

At start the tree's commands are compared with what Discord keeps (`GET
/applications/{id}/commands`, discord.py's `tree.fetch_commands`), both normalised so that what
Discord adds (ids, version, fields at their defaults) is no change. A fresh installation has none
kept, so it syncs. `kindred discord sync` syncs whatever they are (`sync_now`).
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from bot.adapters.discord.commands import command_tree
from bot.adapters.discord.options import DiscordOptions

log = logging.getLogger(__name__)

# Discord's own bookkeeping on a command it keeps, never part of its definition. `dm_permission` is
# the older spelling of `contexts`, which the comparison reads instead.
SERVER_FIELDS = frozenset({"id", "application_id", "version", "guild_id", "dm_permission"})
# Lists whose order Discord does not keep.
UNORDERED = frozenset({"contexts", "integration_types", "channel_types"})
# Where a command may be used and installed: lists of 0-based values that discord.py 2.7's model of
# a fetched command reads one lower, losing 0 (`read_back`).
PLACES = ("contexts", "integration_types")

Tree = app_commands.CommandTree[Any]


def normalised(value: Any) -> Any:
    """A command payload as a definition: Discord's fields out, a field at its default (None, false,
    empty) the same as one left out, permissions as the string Discord answers with."""
    if isinstance(value, dict):
        kept: dict[str, Any] = {}
        for key, item in value.items():
            if key in SERVER_FIELDS or item is None or item is False or item == [] or item == {}:
                continue
            if key == "default_member_permissions":
                kept[key] = str(item)
            elif key in UNORDERED and isinstance(item, list):
                kept[key] = sorted(item)
            else:
                kept[key] = normalised(item)
        return kept
    if isinstance(value, list):
        return [normalised(item) for item in value]
    return value


def kept_payload(command: app_commands.AppCommand) -> dict[str, Any]:
    """What Discord keeps of a command, from discord.py's model of it: its `to_dict` leaves out the
    two fields it holds as attributes only."""
    permissions = command.default_member_permissions
    return dict(command.to_dict()) | {
        "nsfw": command.nsfw,
        "default_member_permissions": None if permissions is None else permissions.value,
    }


def read_back(values: list[int]) -> list[int]:
    """`contexts` or `integration_types` as discord.py 2.7.1's `AppCommand` reads them from Discord
    (its flags take them as 1-based): each one lower, 0 dropped. Pinned by a test."""
    return [value - 1 for value in values if value > 0]


def same(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Whether our payload is the command Discord keeps (`theirs`, normalised from discord.py's
    model): read as sent, or as discord.py reads its places back, so that neither its reading nor a
    fix of it turns an unchanged command into a changed one."""
    as_read = ours | {key: read_back(ours[key]) for key in PLACES if isinstance(ours.get(key), list)}
    return theirs in (normalised(ours), normalised(as_read))


async def changed(tree: Tree, guild: discord.abc.Snowflake | None) -> bool:
    """Whether the tree's commands differ from what Discord keeps (nothing kept: a fresh install)."""
    payloads = [command.to_dict(tree) for command in tree.get_commands(guild=guild)]
    ours = {(payload.get("type", 1), payload["name"]): payload for payload in payloads}
    fetched = await tree.fetch_commands(guild=guild)
    theirs = {(c.type.value, c.name): normalised(kept_payload(c)) for c in fetched}
    if ours.keys() != theirs.keys():
        return True
    return not all(same(payload, theirs[key]) for key, payload in ours.items())


async def sync(tree: Tree, guild_id: int | None, *, force: bool = False) -> int | None:
    """Sync globally (changes reach every server within about an hour), or to `guild_id` only, where
    they apply at once. Returns how many were synced; None when nothing changed."""
    guild = None if guild_id is None else discord.Object(id=guild_id)
    if guild is not None:
        tree.copy_global_to(guild=guild)
    where = f"to guild {guild_id}" if guild_id else "globally"
    if not force and not await changed(tree, guild):
        log.info("slash commands unchanged %s; not synced", where)
        return None
    synced = await tree.sync(guild=guild)
    log.info("synced %d slash commands %s", len(synced), where)
    return len(synced)


async def sync_now(options: DiscordOptions) -> int:
    """Log in (REST only, no gateway) and sync the commands whether or not they changed."""
    client = discord.Client(intents=discord.Intents.none())
    try:
        await client.login(options.token.get_secret_value())
        synced = await sync(command_tree(client), options.dev_guild_id, force=True)
    finally:
        await client.close()
    return synced or 0
