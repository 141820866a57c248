"""The worst of the fuzzed input (tests/adapters/telegram/test_update_fuzz.py) as real updates
through python-telegram-bot's Application and the loopback Bot API: hostile texts, commands with
odd arguments, a reaction to a message Kindred never sent, and an update type it does not know.
Each message gets words back (an answer or a refusal), what was accepted is
stored as cleaned, and the bot keeps answering afterwards."""

from __future__ import annotations

from pathlib import Path

from bot.core.text import clean_message
from tests.adapters.telegram.conftest import ANN, running_bot
from tests.support.hostile import BIDI, HUGE_CHARS, INVISIBLE
from tests.support.telegram_api import FakeTelegramBotApi

HOSTILE = [
    "\x00NUL around\x00 words",
    INVISIBLE * 2,  # nothing readable: refused in words
    f"{BIDI}שלום \u202e reversed مرحبا",
    "x" * HUGE_CHARS,  # past Telegram's own limit, as a proxy or a fake could still send it
    "zero\u200bwidth\u200d joined",
]
COMMANDS = ["/forget ²", "/forget all all", "/memories -1", "/confirm", "/correct 99999999999999999999 x",
            "/privacy training maybe", "/nosuchcommand \x00", "/export@someone_else"]  # fmt: skip


async def test_hostile_updates_get_words_and_lose_nothing(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        for text in HOSTILE:
            api.private_message(ANN, text)
        await api.wait_until(lambda: len(api.texts(ANN)) >= len(HOSTILE), what="words for each message")
        before = len(api.texts(ANN))
        for command in COMMANDS:
            api.private_message(ANN, command)
        api.reaction(ANN, 999_999, ANN, old=[], new=["👍"])  # a message that was never Kindred's
        api.private_message(ANN, "still there?")
        # Polling reads it with PTB's parser, which skips what it does not know.
        api.enqueue({"update_id": next(api._update_ids), "something_new_in_bot_api_99": {"x": [1]}})
        api.private_message(ANN, "and now?")
        # Every command gets words (one Kindred does not have: "I don't know that command"), but
        # the one addressed to another bot; then the two messages.
        answered = before + len(COMMANDS) - 1 + 2

        def done() -> bool:
            return len(api.texts(ANN)) >= answered and api.texts(ANN)[-1] == "Lovely to hear from you."

        await api.wait_until(done, what="words for every command, then answers again")
        turns = await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}")
    said = [text for role, text in turns if role == "user"]
    accepted = [clean_message(text, 4096) for text in (HOSTILE[0], HOSTILE[2], HOSTILE[4])]
    assert said[:3] == accepted and said[-2:] == ["still there?", "and now?"]
    assert bot.feedback() == []
