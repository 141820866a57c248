"""/settings on Telegram, end to end: the real python-telegram-bot against the loopback Bot API,
the real core and SQLite store. Each button applies its choice through the command that sets it
(what /voice, /privacy and /proactive then say agrees), the message shows the settings anew; in a
group only the group's persona shows and only an administrator changes it; /settings web gives a
signed link only in a private chat."""

from __future__ import annotations

from datetime import time
from pathlib import Path

from bot.core.chat.spoken import STATE_ON, SpokenReplies
from bot.core.personas import PersonaBook, parse_personas
from bot.core.personas.picker import GROUP_ADMINS_ONLY
from bot.core.settings import SettingsLinks
from bot.core.settings.screen import NOT_HERE, PERSONAL_ELSEWHERE, WEB_NOT_HERE
from bot.core.store import Store
from tests.adapters.telegram.conftest import ANN, GROUP, running_bot
from tests.media.tts_server import speaking
from tests.support.chat_models import model_picker
from tests.support.telegram_api import FakeTelegramBotApi

BOOK = parse_personas(
    '[[persona]]\nname = "kindred"\nprompt = "You are Kindred."\n'
    '[[persona]]\nname = "coach"\nprompt = "You are a coach."\ngreeting = "Coach here."\n'
)
BOB = 777
PERSON = f"telegram:{ANN}"


class Fixed:
    def book(self) -> PersonaBook:
        return BOOK


def buttons(api: FakeTelegramBotApi, chat: int) -> dict[str, str]:
    """The settings message's buttons: callback data by label."""
    markup = api.bot_messages(chat)[0].reply_markup or {}
    return {b["text"]: b.get("callback_data", "") for row in markup["inline_keyboard"] for b in row}


async def press(api: FakeTelegramBotApi, chat: int, person: int, data: str, edits: int) -> str:
    shown = api.bot_messages(chat)[0]
    api.callback(chat, shown.data["message_id"], person, data)
    await api.wait_until(lambda: len(shown.history) >= edits + 1, what=f"edit {edits}")
    return shown.history[-1]


async def test_each_button_applies_its_choice_through_its_command(
    api: FakeTelegramBotApi, tmp_path: Path, place: str
) -> None:
    """On both stores: the rows read and write only what the commands already keep."""
    async with speaking() as (_, voice):

        def spoken(store: Store) -> SpokenReplies:
            return SpokenReplies(store.turns, voice)

        async with running_bot(api, tmp_path, personas=Fixed(), spoken=spoken, place=place) as bot:
            api.private_message(ANN, "/settings")
            await api.wait_until(lambda: len(api.bot_messages(ANN)) == 1, what="the settings")
            first = api.texts(ANN)[0]
            offered = buttons(api, ANN)
            voice_on = await press(api, ANN, ANN, offered["voice: on"], 1)
            await press(api, ANN, ANN, offered["training: off"], 2)
            await press(api, ANN, ANN, offered["quiet: 23–08"], 3)
            switched = await press(api, ANN, ANN, offered["persona: coach"], 4)
            api.private_message(ANN, "/voice")
            await api.wait_until(lambda: len(api.texts(ANN)) == 2, what="/voice")
            store = bot.store
            assert await store.turns.speaks_replies(PERSON)
            assert await store.learning.training_consent(PERSON) is False
            quiet = await store.proactive.proactive_settings(PERSON)
            assert (quiet.quiet_start, quiet.quiet_end) == (time(23), time(8))
            assert await store.personas.chosen(PERSON) == "coach"
    assert first.startswith("Your settings\n• Persona: kindred (in this chat)")
    assert "• Spoken replies: off: text only (/voice on|off)" in first
    assert "• Training with your replies: on (the default here)" in first
    assert "• Your use: Today: nothing yet" in first
    assert "✓ voice: off" in offered and "✓ persona: kindred" in offered and "✓ quiet: 22–08" in offered
    assert voice_on.startswith("Done: from now on I send each reply as text and then as a voice note.")
    assert "• Spoken replies: on: text, then a voice note" in voice_on
    assert "Coach here." in switched and "• Persona: coach (in this chat)" in switched
    assert (
        "• Quiet hours: 23:00–08:00" in switched
        and "• Training with your replies: off (your choice)" in switched
    )
    assert "✓ persona: coach" in buttons(api, ANN) and "✓ training: off" in buttons(api, ANN)
    assert api.texts(ANN)[1] == STATE_ON  # the command and the screen agree
    assert len(api.callback_answers) == 4


async def test_in_a_group_only_the_groups_persona_shows_and_only_an_admin_changes_it(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    api.admins.add((GROUP, ANN))
    async with running_bot(api, tmp_path, personas=Fixed()) as bot:
        api.group_message(GROUP, BOB, "/settings", first_name="Bob")
        await api.wait_until(lambda: len(api.bot_messages(GROUP)) == 1, what="the settings")
        listed = api.texts(GROUP)[0]
        offered = buttons(api, GROUP)
        refused = await press(api, GROUP, BOB, offered["persona: coach"], 1)
        untouched = await bot.store.personas.chosen(f"telegram:{GROUP}")
        forged = await press(api, GROUP, ANN, "settings:training:off", 2)  # not a button a group shows
        switched = await press(api, GROUP, ANN, offered["persona: coach"], 3)
        chosen = await bot.store.personas.chosen(f"telegram:{GROUP}")
        kept_for = await bot.store.personas.chosen_by(f"telegram:{ANN}")
        consent = await bot.store.learning.training_consent(f"telegram:{ANN}")
    assert listed.splitlines() == [
        "This chat's settings",
        "• Persona: kindred (in this group, set by its admins) (/persona NAME)",
        PERSONAL_ELSEWHERE,
    ]
    assert set(offered) == {"✓ persona: kindred", "persona: coach"}  # no personal row, no web link
    assert refused.startswith(GROUP_ADMINS_ONLY) and untouched is None
    assert forged.startswith(NOT_HERE) and consent is None
    assert switched.startswith("Done: I'm coach in this chat now.") and chosen == "coach"
    assert kept_for == []


async def test_settings_web_gives_a_signed_link_only_in_a_private_chat(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    links = SettingsLinks(b"k" * 32, "https://kindred.example")
    async with running_bot(api, tmp_path, personas=Fixed(), settings_links=links):
        api.private_message(ANN, "/settings")
        await api.wait_until(lambda: len(api.bot_messages(ANN)) == 1, what="the settings")
        web = buttons(api, ANN)["Open as a web page"]
        api.callback(ANN, api.bot_messages(ANN)[0].data["message_id"], ANN, web)
        api.private_message(ANN, "/settings web")
        await api.wait_until(lambda: len(api.texts(ANN)) == 3, what="two links")
        api.group_message(GROUP, ANN, "/settings web")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 1, what="the refusal")
    for said in api.texts(ANN)[1:]:
        url = said.splitlines()[-1]
        assert url.startswith("https://kindred.example/s/")
        claim = links.read(url.removeprefix("https://kindred.example/s/"))
        assert not isinstance(claim, str) and (claim.person, claim.chat) == (PERSON, PERSON)
    assert api.texts(GROUP) == [WEB_NOT_HERE]
    sent = [c.params for c in api.calls_of("sendMessage") if "/s/" in str(c.params.get("text"))]
    assert len(sent) == 2 and all(
        p["link_preview_options"]["is_disabled"] for p in sent
    )  # no crawler reads it


async def test_a_typed_setting_is_checked_and_an_unknown_one_answers_with_what_exists(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path, personas=Fixed()) as bot:
        for typed in ("/settings persona pirate", "/settings colour blue", "/settings training off"):
            api.private_message(ANN, typed)
        await api.wait_until(lambda: len(api.texts(ANN)) == 3, what="three answers")
        consent = await bot.store.learning.training_consent(PERSON)
    pirate, colour, training = (text.splitlines()[0] for text in api.texts(ANN))
    assert pirate == "Persona can't be 'pirate'; it can be: kindred, coach. /persona NAME"
    assert (
        colour == "I have no setting called 'colour'. There are: persona, checkins, quiet, training, usage."
    )
    assert training.startswith("Done: training is off for you.") and consent is False


async def test_the_model_row_offers_only_the_models_the_person_may_use(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    """/model's choice from the screen: the models Ann may use are buttons (not the admins'), and
    a press is the same choice /model makes."""
    async with running_bot(api, tmp_path, models=model_picker) as bot:
        api.private_message(ANN, "/settings")
        await api.wait_until(lambda: len(api.bot_messages(ANN)) == 1, what="the settings")
        first, offered = api.texts(ANN)[0], buttons(api, ANN)
        switched = await press(api, ANN, ANN, offered["model: big"], 1)
        assert await bot.store.models.chosen(PERSON) == "big"
    assert "• Model: small (in this chat)" in first
    assert "✓ model: small" in offered and "model: secret" in offered, "secret lists Ann"
    assert "model: boss" not in offered, "boss is the admins'"
    assert "Done: I answer with big in this chat now." in switched
    assert "• Model: big (in this chat)" in switched
