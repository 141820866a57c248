"""`kindred run` without Redis runs beat's schedule itself: with the nightly entry due every minute,
the real nightly job runs in this process (a store with no rated replies: a skipped night), and
nothing is sent after the process stopped."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.cli.run import serve
from bot.store.sqlite.store import SqliteStore
from bot.wiring.settings import (
    ChatSettings,
    GeneralSettings,
    InferenceSettings,
    Settings,
    StoreSettings,
    TelegramSettings,
    WebSettings,
)
from bot.wiring.settings.training import TrainingSettings
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.waiting import wait_until


async def runs(db: Path) -> list[tuple[str, str]]:
    store = await SqliteStore.open(db, migrate=False)  # `kindred run` migrated it
    try:
        return [(run.status, run.message) for run in await store.adapters.list_runs(10)]
    finally:
        await store.close()


async def test_the_nightly_entry_runs_in_process_when_it_is_due(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    db = tmp_path / "kindred.db"
    async with FakeTelegramBotApi() as telegram:
        settings = Settings(
            telegram=TelegramSettings(
                TELEGRAM_BOT_TOKEN=telegram.token, TELEGRAM_API_BASE_URL=telegram.base_url
            ),
            store=StoreSettings(DATABASE_URL=f"sqlite:///{db}"),
            general=GeneralSettings(data_dir=shared_data),
            inference=InferenceSettings(model=str(tiny_model)),
            chat=ChatSettings(max_new_tokens=6),
            web=WebSettings(port=0),
            training=TrainingSettings(cron="* * * * *"),
        )
        stop = asyncio.Event()
        served = asyncio.create_task(serve(settings, stop=stop))
        try:
            await telegram.wait_for_call("getUpdates", timeout=120)
            await wait_until(lambda: runs(db), within_s=120, what="the scheduled nightly run")
        finally:
            stop.set()
            assert await asyncio.wait_for(served, 60) == 0
    ((status, message),) = await runs(db)
    assert status == "skipped" and message.startswith("not enough data")
