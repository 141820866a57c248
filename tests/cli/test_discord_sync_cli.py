"""`kindred discord sync` syncs the slash commands even when they are unchanged, against the Discord
fake; the next start then finds them unchanged and sends no sync."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import discord_sync
from bot.cli.main import _parser
from bot.store.sqlite.store import SqliteStore
from bot.wiring.settings import load_settings
from tests.adapters.discord.conftest import fake, running, services
from tests.adapters.discord.test_command_sync import syncs
from tests.support import discord_payloads as p
from tests.support.discord_fake import FakeDiscord

__all__ = ["fake"]  # a fixture, imported for pytest to find


async def test_kindred_discord_sync_syncs_unchanged_commands(
    fake: FakeDiscord,
    store: SqliteStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with running(services(store)):
        pass
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DISCORD_BOT_TOKEN", p.TOKEN)
    monkeypatch.delenv("DISCORD_DEV_GUILD_ID", raising=False)
    args = _parser().parse_args(["discord", "sync"])
    assert args.command == "discord" and args.verb == "sync"
    assert await discord_sync.sync(load_settings(), args) == 0
    assert syncs(fake) == 2
    assert "synced 20 slash commands globally" in capsys.readouterr().out
    async with running(services(store)):
        pass
    assert syncs(fake) == 2  # and the next start finds them unchanged


def test_the_parser_knows_the_command() -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["discord"])  # a verb is required
    assert _parser().parse_args(["discord", "sync"]).verb == "sync"
