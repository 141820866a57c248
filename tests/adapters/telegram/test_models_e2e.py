"""/model on Telegram, end to end: the real python-telegram-bot against the loopback Bot API, the
real conversation and SQLite store. Alone it lists the models the person may use as buttons, the
current one marked; a button pressed switches and the next reply comes from that model; an
unknown name answers with the list; a model the person may not use is refused; in a group only an
administrator (as getChatMember says) switches."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.support.chat_models import model_picker
from tests.support.fakes import ScriptedInference
from tests.support.telegram_api import FakeTelegramBotApi

BOB = 777


async def test_the_picker_lists_buttons_and_a_pressed_one_answers_the_next_reply(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(
        api, tmp_path, inference=ScriptedInference("small here."), models=model_picker
    ) as bot:
        api.private_message(ANN, "Hi")
        await replies_done(api, ANN, 1)
        api.private_message(ANN, "/model")
        await api.wait_until(lambda: len(api.bot_messages(ANN)) == 2, what="the picker")
        picker = api.bot_messages(ANN)[1]
        rows = picker.data["reply_markup"]["inline_keyboard"]
        api.callback(ANN, picker.data["message_id"], ANN, rows[0][1]["callback_data"])
        await api.wait_until(lambda: len(api.texts(ANN)) == 3, what="the switch")
        api.private_message(ANN, "Hi again")
        await replies_done(api, ANN, 2)
        chosen = await bot.store.models.chosen(f"telegram:{ANN}")
    # Ann (telegram:4242) is on the `secret` model's list; nobody here is an admin, so no `boss`.
    assert [[button["text"] for button in row] for row in rows] == [["✓ small", "big"], ["secret"]]
    assert api.texts(ANN)[2].startswith("Done: I answer with big in this chat now.") and chosen == "big"
    assert api.texts(ANN)[0] == "small here." and api.texts(ANN)[-1] == "big here."
    assert len(api.callback_answers) == 1


async def test_an_unknown_name_and_a_model_not_allowed_are_answered(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path, models=model_picker) as bot:
        api.private_message(ANN, "/model pirate")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1, what="the answer")
        api.private_message(ANN, "/model boss")
        await api.wait_until(lambda: len(api.texts(ANN)) == 2, what="the refusal")
        assert await bot.store.models.chosen(f"telegram:{ANN}") is None
    assert api.texts(ANN) == [
        "I have no model called 'pirate'. Models you may use: small (now), big, secret. "
        "/model NAME picks one.",
        "You may not use boss; ask my admin. Models you may use: small, big, secret. /model NAME picks one.",
    ]


async def test_in_a_group_only_an_administrator_switches(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    api.admins.add((GROUP, ANN))
    async with running_bot(api, tmp_path, models=model_picker) as bot:
        api.group_message(GROUP, BOB, "/model big", first_name="Bob")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 1, what="the refusal")
        refused = await bot.store.models.chosen(f"telegram:{GROUP}")
        api.group_message(GROUP, ANN, "/model big")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 2, what="the switch")
        chosen = await bot.store.models.chosen(f"telegram:{GROUP}")
        kept_for = await bot.store.models.chosen_by(f"telegram:{ANN}")
    assert api.texts(GROUP)[0] == "Only this group's admins can change my model here."
    assert refused is None and chosen == "big"
    assert kept_for == []  # a group's choice is the group's, not forgotten with a person
