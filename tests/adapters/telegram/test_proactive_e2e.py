"""/proactive and /reminders on Telegram, and "remind me …" in a private chat, through
python-telegram-bot's real Application on the loopback Bot API; a group gets neither list. The
"don't suggest this again" button under a message the beat sent through PTB's `Bot`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.adapters.telegram.messenger import TelegramMessenger
from bot.core.proactive.beat import ProactiveBeat
from bot.core.proactive.models import DONT_SUGGEST_AGAIN
from tests.adapters.telegram.conftest import ANN, GROUP, running_bot
from tests.support import proactive
from tests.support.fakes import HashEmbedder
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


async def test_the_dont_suggest_again_button_turns_that_kind_off_for_its_person_only(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    now = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)  # the beat's simulated clock: outside quiet hours
    async with running_bot(api, tmp_path) as bot:
        await proactive.working_for_hours(bot.store, ANN_KEY, 3.5, now)
        await proactive.opt_in(bot.store, ANN_KEY, now, timezone="UTC")
        messenger = TelegramMessenger(api.token, api.base_url, api.base_file_url)
        try:
            report = await ProactiveBeat(bot.store, {"telegram": messenger}, HashEmbedder).run(now)
        finally:
            await messenger.close()
        assert report.sent == 1
        [used] = await bot.store.usage.days(now.date(), now.date(), ANN_KEY)
        assert used.proactive == 1, "the message Kindred started is counted for its person"
        [shown] = api.bot_messages(ANN)
        assert shown.reply_markup is not None
        [[button]] = shown.reply_markup["inline_keyboard"]
        assert button["text"] == DONT_SUGGEST_AGAIN
        message_id = shown.data["message_id"]
        api.callback(ANN, message_id, 77, button["callback_data"])  # someone else's press
        await api.wait_until(lambda: len(api.callback_answers) == 1)
        assert (await bot.store.proactive.proactive_settings(ANN_KEY)).disabled == frozenset()
        api.callback(ANN, message_id, ANN, button["callback_data"])
        await api.wait_until(lambda: len(api.texts(ANN)) == 2)
        assert api.texts(ANN)[1].startswith("Okay, no more break suggestions.")
        assert api.bot_messages(ANN)[0].reply_markup in (None, {})
        assert (await bot.store.proactive.proactive_settings(ANN_KEY)).disabled == {"long_session"}
        [row] = await bot.store.proactive.sent_messages(ANN_KEY, now - timedelta(days=1))
        assert row.outcome == "dismissed"
