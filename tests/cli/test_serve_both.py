"""`kindred run`'s composition in one process: Telegram and Discord served side by side over one
store, each through its real SDK against its loopback fake, with the real embedder and a tiny model.
(The Discord fake is reached by pointing discord.py at it in this process, so this runs serve()
in-process; tests/cli/test_run.py runs `kindred run` as a real process for Telegram.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.cli.run import serve
from bot.wiring.settings import (
    ChatSettings,
    DiscordSettings,
    GeneralSettings,
    InferenceSettings,
    Settings,
    StoreSettings,
    TelegramSettings,
    WebSettings,
)
from tests.adapters.discord.conftest import fake
from tests.adapters.telegram.conftest import ANN, replies_done
from tests.support import discord_payloads as p
from tests.support.discord_fake import FakeDiscord
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.waiting import wait_until

__all__ = ["fake"]  # a fixture, imported for pytest to find


def served_settings(
    db: Path, general: GeneralSettings, model: Path, *, telegram: TelegramSettings | None = None
) -> Settings:
    """serve()'s settings for Discord on its loopback fake (and Telegram, if given), a tiny model."""
    return Settings(
        telegram=telegram or TelegramSettings(),
        discord=DiscordSettings(DISCORD_BOT_TOKEN=p.TOKEN),
        store=StoreSettings(DATABASE_URL=f"sqlite:///{db}"),
        general=general,
        inference=InferenceSettings(model=str(model)),
        chat=ChatSettings(max_new_tokens=6),
        web=WebSettings(port=0),
    )


async def test_telegram_and_discord_share_one_process_and_one_store(
    fake: FakeDiscord, tmp_path: Path, shared_data: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with FakeTelegramBotApi() as telegram:
        settings = served_settings(
            tmp_path / "kindred.db",
            GeneralSettings(data_dir=shared_data),
            tiny_model,
            telegram=TelegramSettings(
                TELEGRAM_BOT_TOKEN=telegram.token, TELEGRAM_API_BASE_URL=telegram.base_url
            ),
        )
        stop = asyncio.Event()
        served = asyncio.create_task(serve(settings, stop=stop))
        try:
            await telegram.wait_for_call("getUpdates", timeout=120)
            # The platforms start one after the other; a DM before Discord's READY would be lost.
            await wait_until(lambda: bool(fake.gateway.dispatches("READY")), within_s=60, what="READY")
            person = p.user(7_100_000_000_000_000_001, "dana")
            on_discord = await fake.dm(person, "hello from Discord")
            telegram.private_message(ANN, "hello from Telegram")
            await replies_done(telegram, ANN, 1, wait_s=60)
            await wait_until(
                lambda: len(fake.replies_to(on_discord)) == 1, within_s=60, what="a Discord reply"
            )
        finally:
            stop.set()
            assert await asyncio.wait_for(served, 60) == 0
    from bot.store.sqlite.store import SqliteStore

    store = await SqliteStore.open(tmp_path / "kindred.db")
    try:
        stats = await store.stats()
    finally:
        await store.close()
    assert (stats.users, stats.turns) == (2, 4)
