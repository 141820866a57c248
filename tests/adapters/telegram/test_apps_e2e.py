"""/app and /apps through a real python-telegram-bot Application against the loopback Bot API,
with the real build job: one status message edited into the answer, a web-app button in a private
chat, a URL button in a group, and no list of links (each is its app's key) in a group."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.adapters.telegram.conftest import ANN, GROUP, running_bot
from tests.support.app_jobs import APPS_URL, app_commands
from tests.support.telegram_api import FakeTelegramBotApi


async def test_app_in_a_private_chat_edits_one_status_into_a_web_app_button(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with app_commands(tmp_path / "kindred.db") as apps, running_bot(api, tmp_path, apps=apps) as bot:
        api.private_message(ANN, "/app a packing checklist for my beach trip")
        await api.wait_until(lambda: any("is ready" in text for text in api.texts(ANN)), 20.0)
        today = datetime.now(UTC).date()
        [used] = await bot.store.usage.days(today - timedelta(days=1), today, f"telegram:{ANN}")
        assert used.app_builds == 1, "the app built is counted for its owner"
        [status] = api.bot_messages(ANN)
        assert status.history[0] == "Working out what you need…" and len(status.history) >= 2
        assert status.text is not None and f"{APPS_URL}/a/" in status.text
        [[button]] = (status.reply_markup or {})["inline_keyboard"]
        assert button["text"] == "Open the app" and button["web_app"]["url"].startswith(f"{APPS_URL}/a/")

        api.private_message(ANN, "/apps")
        await api.wait_until(lambda: len(api.bot_messages(ANN)) == 2)
        assert "Packing checklist for my beach trip" in api.texts(ANN)[-1]


async def test_app_in_a_group_gets_a_url_button_and_apps_stays_private(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with app_commands(tmp_path / "kindred.db") as apps, running_bot(api, tmp_path, apps=apps):
        api.group_message(GROUP, ANN, "/app a countdown to christmas")
        await api.wait_until(lambda: any("is ready" in text for text in api.texts(GROUP)), 20.0)
        [[button]] = (api.bot_messages(GROUP)[0].reply_markup or {})["inline_keyboard"]
        assert "web_app" not in button and button["url"].startswith(f"{APPS_URL}/a/")
        api.group_message(GROUP, ANN, "/apps")
        await api.wait_until(lambda: len(api.bot_messages(GROUP)) == 2)
        assert "private chat" in api.texts(GROUP)[-1] and APPS_URL not in api.texts(GROUP)[-1]


async def test_a_failed_build_says_why_in_the_same_message(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with app_commands(tmp_path / "kindred.db") as apps, running_bot(api, tmp_path, apps=apps):
        api.private_message(ANN, "/app a pomodoro timer")
        await api.wait_until(lambda: any("is ready" in text for text in api.texts(ANN)), 20.0)
        api.private_message(ANN, "/app add a column for price")
        await api.wait_until(lambda: any("can't do that" in text for text in api.texts(ANN)), 20.0)
        assert api.bot_messages(ANN)[-1].reply_markup is None


async def test_a_busy_build_offers_a_retry_button_that_only_its_asker_can_press(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with app_commands(tmp_path / "kindred.db") as apps, running_bot(api, tmp_path, apps=apps) as bot:
        held = [f"held-{n}" for n in range(2)]  # two builds already running for Ann: the limit
        for key in held:
            assert await bot.store.miniapps.start_build(
                key, f"telegram:{ANN}", _now(), limit=2, stale_after=_TEN
            )
        api.group_message(GROUP, ANN, "/app a packing checklist for my beach trip")
        await api.wait_until(lambda: any("apps building" in text for text in api.texts(GROUP)), 20.0)
        [status] = api.bot_messages(GROUP)
        assert "When one is done, try again" in (status.text or "")
        [[button]] = (status.reply_markup or {})["inline_keyboard"]
        assert button["text"] == "Try again" and button["callback_data"].startswith("app-retry:")
        assert len(button["callback_data"].encode()) <= 64  # Telegram's limit on callback_data

        await bot.store.miniapps.finish_build(held[0], "succeeded", "", _now())
        api.callback(GROUP, status.data["message_id"], BOB, button["callback_data"])  # not his request
        [refused] = await api.wait_for_call("answerCallbackQuery")
        assert "not yours" in refused.params["text"] and status.text and "apps building" in status.text
        api.callback(GROUP, status.data["message_id"], ANN, button["callback_data"])
        await api.wait_until(lambda: any("is ready" in text for text in api.texts(GROUP)), 20.0)
        [edited] = api.bot_messages(GROUP)  # the same message, edited into the link
        assert "Packing checklist for my beach trip" in (edited.text or "")
        [[opened]] = (edited.reply_markup or {})["inline_keyboard"]
        assert opened["url"].startswith(f"{APPS_URL}/a/")  # a group: a URL button
        assert await api.wait_for_call("answerCallbackQuery", count=2)


def _now() -> datetime:
    return datetime.now(UTC)


_TEN = timedelta(minutes=10)
BOB = 5151  # another member of the group
