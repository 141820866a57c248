"""A poison update in polling mode: python-telegram-bot parses a getUpdates batch as a whole, so one
update it cannot read would fail every poll of that offset, forever, and nothing after it would
be handled. Through the real PTB Application against the loopback Bot API: the bad update is
logged (its id and error, never its text) and skipped, its id is confirmed, and the messages
after it are answered."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.telegram.unreadable import readable_updates
from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.telegram_updates import message_json, private_chat_json, user_json

SECRET = "my secret diary entry"


def bad_message(**change: Any) -> dict[str, Any]:
    """A private message from Ann with SECRET as its text, then `change`d (None: the key removed)."""
    user = user_json(ANN, "Ann")
    message = message_json(900, private_chat_json(user), user, SECRET)
    for key, value in change.items():
        if value is None:
            message.pop(key)
        else:
            message[key] = value
    return message


POISON = {
    "no date": {"message": bad_message(date=None)},  # PTB: KeyError: 'date'
    "date not a number": {"message": bad_message(date="yesterday")},
    "date past time_t": {"message": bad_message(date=10**20)},
    "chat not an object": {"message": bad_message(chat="somewhere")},
    "sender not an object": {"message": bad_message(**{"from": [1, 2]})},
    "reaction to a chat that is a string": {"message_reaction": {"chat": "x", "message_id": 1, "date": 0}},
    "callback whose sender is a number": {"callback_query": {"id": "7", "from": 5, "chat_instance": "c"}},
}


@pytest.mark.parametrize("poison", POISON.values(), ids=POISON.keys())
async def test_an_unreadable_update_is_skipped_and_the_next_messages_are_answered(
    api: FakeTelegramBotApi, tmp_path: Path, caplog: pytest.LogCaptureFixture, poison: dict[str, Any]
) -> None:
    caplog.set_level(logging.INFO)
    async with running_bot(api, tmp_path) as bot:
        bad_id = next(api._update_ids)
        api.enqueue({"update_id": bad_id, **poison})
        api.private_message(ANN, "hello after the bad one")
        api.private_message(ANN, "and again")
        texts = await replies_done(api, ANN, 2)
        turns = await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}")
    assert texts == ["Lovely to hear from you."] * 2
    assert [text for role, text in turns if role == "user"] == ["hello after the bad one", "and again"]
    assert f"telegram: skipped update {bad_id}, which cannot be read (" in caplog.text
    assert SECRET not in caplog.text  # a person's words never reach the log


async def test_an_unreadable_last_update_is_confirmed_and_polling_goes_back_to_waiting(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    """Alone in its batch: skipping it must still move the offset past it, or every poll would
    return it at once and the bot would ask Telegram as fast as it can."""
    async with running_bot(api, tmp_path):
        api.enqueue({"update_id": next(api._update_ids), "message": bad_message(date=None)})
        await api.wait_until(lambda: api.updates == [], what="the bad update confirmed")
        polls = len(api.calls_of("getUpdates"))
        await asyncio.sleep(1.5)  # long polls of 1 s each (poll_timeout_s=1): two at most
        assert len(api.calls_of("getUpdates")) - polls <= 3
        api.private_message(ANN, "hello")
        assert await replies_done(api, ANN, 1) == ["Lovely to hear from you."]


async def test_a_text_of_the_wrong_type_gets_no_answer_and_stops_nothing(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    """PTB reads it (it checks no types), so the handlers see it; they must not stop the next one."""
    async with running_bot(api, tmp_path):
        api.enqueue({"update_id": next(api._update_ids), "message": bad_message(text=12345)})
        api.private_message(ANN, "hello")
        assert await replies_done(api, ANN, 1) == ["Lovely to hear from you."]


def test_the_answer_is_checked_update_by_update_and_otherwise_left_as_it_came() -> None:
    good = {"update_id": 7, "message": bad_message()}
    body = json.dumps({"ok": True, "result": [good]}).encode()
    assert readable_updates(body) is body  # nothing to take out: not even re-encoded
    for other in (b"<html>proxy error</html>", b'{"ok": false, "error_code": 502}', b"[1, 2]"):
        assert readable_updates(other) is other  # for PTB to report as it does
    mixed = [{"update_id": 6, "message": bad_message(date=None)}, "not an update", {"message": {}}, good]
    checked = json.loads(readable_updates(json.dumps({"ok": True, "result": mixed}).encode()))
    assert checked == {"ok": True, "result": [{"update_id": 6}, good]}


async def test_a_mention_that_ends_inside_a_surrogate_pair_is_no_mention_and_raises_nothing(
    api: FakeTelegramBotApi, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Found by test_update_fuzz.py: PTB's parse_entities raised UnicodeDecodeError on it."""
    async with running_bot(api, tmp_path):
        odd = api.group_message(GROUP, ANN, "😀😀 hi")
        odd["message"]["entities"] = [{"type": "mention", "offset": 0, "length": 1}]
        api.group_message(GROUP, ANN, "hello", mention=True)
        assert await replies_done(api, GROUP, 1) == ["Lovely to hear from you."]
    assert "handling an update failed" not in caplog.text
