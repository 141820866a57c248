"""/proactive and /reminders on Telegram, and "remind me …" in a private chat, through
python-telegram-bot's real Application on the loopback Bot API; a group gets neither list."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.telegram.conftest import ANN, GROUP, running_bot
from tests.support.telegram_api import FakeTelegramBotApi

ANN_KEY = f"telegram:{ANN}"


async def test_proactive_settings_reminders_and_their_cancelling(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.private_message(ANN, "/proactive timezone Asia/Tokyo")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        assert api.texts(ANN)[0].startswith("Done: your time zone is Asia/Tokyo")
        api.private_message(ANN, "remind me on Friday at 6pm to book the onsen")
        await api.wait_until(lambda: len(api.texts(ANN)) == 2)
        assert "at 18:00 (Asia/Tokyo)" in api.texts(ANN)[1]
        [reminder] = await bot.store.proactive.reminders(ANN_KEY)
        api.private_message(ANN, "/reminders")
        await api.wait_until(lambda: len(api.texts(ANN)) == 3)
        assert f"#{reminder.id} · " in api.texts(ANN)[2] and "book the onsen" in api.texts(ANN)[2]
        api.private_message(ANN, f"/reminders cancel {reminder.id}")
        await api.wait_until(lambda: len(api.texts(ANN)) == 4)
        assert api.texts(ANN)[3] == f"Cancelled reminder #{reminder.id}."
        api.group_message(GROUP, ANN, "/reminders")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 1)
        assert api.texts(GROUP)[0].startswith("For your privacy")
        assert await bot.store.proactive.reminders(ANN_KEY) == []
