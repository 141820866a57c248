"""The slash commands are synced only when they changed: a fresh installation syncs, a restart (or
a restart loop) with the same commands sends no sync, a changed command syncs, and
`kindred discord sync` syncs whatever they are. Against the fake, which keeps the commands as
Discord does (ids, version, its defaults filled in) and answers the GET with them.
`kindred discord sync`: tests/cli/test_discord_sync_cli.py."""

from __future__ import annotations

from discord.app_commands import AppCommand

from bot.adapters.discord.command_sync import kept_payload, normalised, read_back
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import FakeDiscord

GLOBAL = f"/api/v10/applications/{p.APP_ID}/commands"
IN_GUILD = f"/api/v10/applications/{p.APP_ID}/guilds/{p.GUILD_ID}/commands"


def syncs(fake: FakeDiscord, path: str = GLOBAL) -> int:
    return sum(1 for call in fake.rest.calls if call.method == "PUT" and call.path == path)


def reads(fake: FakeDiscord, path: str = GLOBAL) -> int:
    return sum(1 for call in fake.rest.calls if call.method == "GET" and call.path == path)


async def test_a_fresh_installation_syncs_and_a_restart_with_the_same_commands_does_not(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(services(store)):
        pass
    assert syncs(fake) == 1
    async with running(services(store)):
        pass
    assert (syncs(fake), reads(fake)) == (1, 2)


async def test_a_restart_loop_sends_no_sync(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store)):
        pass
    for _ in range(5):
        async with running(services(store)):
            pass
    assert (syncs(fake), reads(fake)) == (1, 6)


async def test_a_changed_command_syncs(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store)):
        pass
    # As if the running version had shipped another description for /help.
    [kept_help] = [command for command in fake.rest.commands[GLOBAL] if command["name"] == "help"]
    kept_help["description"] = "an older description"
    async with running(services(store)):
        pass
    assert syncs(fake) == 2
    [help_now] = [command for command in fake.rest.commands[GLOBAL] if command["name"] == "help"]
    assert help_now["description"] != "an older description"


async def test_a_command_gone_from_the_tree_or_new_to_it_syncs(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store)):
        pass
    fake.rest.commands[GLOBAL].pop()
    async with running(services(store)):
        pass
    assert syncs(fake) == 2


async def test_the_dev_guild_syncs_only_on_change_too(fake: FakeDiscord, store: SqliteStore) -> None:
    for _ in range(3):
        async with running(services(store), dev_guild_id=p.GUILD_ID):
            pass
    assert (syncs(fake, IN_GUILD), syncs(fake)) == (1, 0)


def test_what_discord_adds_is_no_change() -> None:
    ours = {
        "name": "chat",
        "description": "talk",
        "type": 1,
        "options": [
            {"type": 3, "name": "message", "description": "what", "required": True},
            {"type": 4, "name": "count", "description": "how many", "required": False},
        ],
        "nsfw": False,
        "dm_permission": True,
        "default_member_permissions": 8,
        "contexts": [0, 1, 2],
        "integration_types": [0, 1],
    }
    kept = p.kept_as_discord_does(ours) | {"id": "1", "application_id": "2", "version": "3"}
    kept["contexts"] = [2, 0, 1]
    assert kept != ours and normalised(kept) == normalised(ours)
    assert normalised(kept | {"default_member_permissions": "0"}) != normalised(ours)
    assert normalised(kept | {"nsfw": True}) != normalised(ours)


async def test_discord_py_reads_a_fetched_commands_places_as_pinned() -> None:
    """command_sync.read_back is how discord.py 2.7.1's AppCommand reads `contexts` and
    `integration_types`; should that change, this fails and the comparison is looked at again."""
    data = {"id": "1", "application_id": "2", "name": "x", "description": "y", "type": 1}
    command = AppCommand(data=data | {"contexts": [0, 1, 2], "integration_types": [0, 1]}, state=None)  # type: ignore[arg-type]
    payload = kept_payload(command)
    assert payload["contexts"] == read_back([0, 1, 2]) and payload["integration_types"] == read_back([0, 1])
