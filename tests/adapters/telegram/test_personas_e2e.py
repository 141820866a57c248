"""/persona on Telegram, end to end: the real python-telegram-bot against the loopback Bot API,
the real conversation and SQLite store. Alone it lists the personas as buttons, the current one
marked; a button pressed (a callback query) switches and greets; an unknown name answers with the
list; in a group only an administrator (as getChatMember says) switches."""

from __future__ import annotations

from pathlib import Path

from bot.core.personas import PersonaBook, parse_personas
from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.support.fakes import ScriptedInference
from tests.support.telegram_api import FakeTelegramBotApi

BOOK = parse_personas(
    '[[persona]]\nname = "kindred"\nprompt = "You are Kindred."\n'
    '[[persona]]\nname = "coach"\nprompt = "You are a coach."\ngreeting = "Coach here."\n'
)
BOB = 777


class Fixed:
    def book(self) -> PersonaBook:
        return BOOK


async def test_the_picker_lists_buttons_and_a_pressed_one_switches(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    model = ScriptedInference("Sure.")
    async with running_bot(api, tmp_path, inference=model, personas=Fixed()) as bot:
        api.private_message(ANN, "/persona")
        await api.wait_until(lambda: len(api.bot_messages(ANN)) == 1, what="the picker")
        [picker] = api.bot_messages(ANN)
        rows = picker.data["reply_markup"]["inline_keyboard"]
        api.callback(ANN, picker.data["message_id"], ANN, rows[0][1]["callback_data"])
        await api.wait_until(lambda: len(api.texts(ANN)) == 2, what="the switch")
        api.private_message(ANN, "Hi")
        await replies_done(api, ANN, 1)
        chosen = await bot.store.personas.chosen(f"telegram:{ANN}")
    assert [[button["text"] for button in row] for row in rows] == [["✓ kindred", "coach"]]
    assert api.texts(ANN)[1].endswith("Coach here.") and chosen == "coach"
    assert model.prompts[-1][0].content.startswith("You are a coach.")
    assert len(api.callback_answers) == 1


async def test_an_unknown_name_answers_with_the_list(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path, personas=Fixed()) as bot:
        api.private_message(ANN, "/persona pirate")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1, what="the answer")
        assert await bot.store.personas.chosen(f"telegram:{ANN}") is None
    assert api.texts(ANN) == [
        "I have no persona called 'pirate'. Personas: kindred (now), coach. /persona NAME picks one."
    ]


async def test_in_a_group_only_an_administrator_switches(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    api.admins.add((GROUP, ANN))
    async with running_bot(api, tmp_path, personas=Fixed()) as bot:
        api.group_message(GROUP, BOB, "/persona coach", first_name="Bob")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 1, what="the refusal")
        refused = await bot.store.personas.chosen(f"telegram:{GROUP}")
        api.group_message(GROUP, ANN, "/persona coach")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 2, what="the switch")
        chosen = await bot.store.personas.chosen(f"telegram:{GROUP}")
        kept_for = await bot.store.personas.chosen_by(f"telegram:{ANN}")
    assert api.texts(GROUP)[0] == "Only this group's admins can change my persona here."
    assert refused is None and chosen == "coach"
    assert kept_for == []  # a group's choice is the group's, not exported or forgotten with a person
