"""Sends that never double and never vanish unseen, end to end: the real python-telegram-bot
Application against the loopback Bot API, which delivers a message and then answers 500, or
delivers it and never answers (past the client's read timeout).

A maybe-delivered reply is shown at most once, stored as of unknown delivery, confirmed by a
reaction or a reply on the message id the bot never learned, and otherwise told once at the
person's next message, with a button that sends it again once."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from bot.adapters.telegram.chat import ChatPolicy
from bot.cli.main import main
from bot.core.chat.doubts import DOUBT_NOTICE, NOTHING_TO_SEND, SENT_AGAIN
from bot.core.models import DeliveryDoubt
from tests.adapters.telegram.conftest import ANN, GROUP, Running, running_bot
from tests.support.fakes import SlowInference
from tests.support.telegram_api import FakeTelegramBotApi

REPLY = "Lovely to hear from you."
NOTICE = "My last reply may not have reached you: “Lovely to hear from you.”"  # it quotes the reply


async def _doubts(bot: Running, chat_id: int) -> list[DeliveryDoubt]:
    return await bot.store.deliveries.waiting("telegram", str(chat_id))


async def _until_doubtful(bot: Running, chat_id: int) -> DeliveryDoubt:
    for _ in range(200):
        if waiting := await _doubts(bot, chat_id):
            return waiting[-1]
        await asyncio.sleep(0.05)
    raise AssertionError("no reply of unknown delivery was recorded")


async def _first_reply_fails(api: FakeTelegramBotApi, bot: Running, fault: str) -> DeliveryDoubt:
    """The person's first message in the group; its reply's send fails with `fault`."""
    api.fail_next("sendMessage", fault)  # type: ignore[arg-type]
    api.group_message(GROUP, ANN, "hello", mention=True)
    return await _until_doubtful(bot, GROUP)


@pytest.mark.parametrize("fault", ["server_error_after", "timeout_after"])
async def test_a_reply_that_landed_and_then_failed_shows_once_and_a_reaction_on_it_counts(
    api: FakeTelegramBotApi, tmp_path: Path, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_bot(api, tmp_path) as bot:
        doubt = await _first_reply_fails(api, bot, fault)
        assert (doubt.text, doubt.status) == (REPLY, "unknown")
        assert api.texts(GROUP) == [REPLY] and len(api.calls_of("sendMessage")) == 1
        # The person reacts on the message whose id the bot never learned.
        [shown] = api.bot_messages(GROUP)
        api.reaction(GROUP, shown.data["message_id"], ANN, old=[], new=["👍"])
        await api.wait_until(lambda: len(bot.feedback()) == 1, what="the reaction recorded")
        assert bot.feedback()[0][0] == doubt.turn_id
        assert await _doubts(bot, GROUP) == []
        api.group_message(GROUP, ANN, "and now?", mention=True)
        await api.wait_until(lambda: len(api.texts(GROUP)) == 2)
        assert not any(text.startswith(DOUBT_NOTICE) for text in api.texts(GROUP))
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    out = tmp_path / "stats.json"
    code = await asyncio.to_thread(_stats_to, out)
    assert code == 0 and json.loads(out.read_text())["feedback_events"] == 1


def _stats_to(out: Path) -> int:
    """`kindred stats --json`, its one line written to `out`."""
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["stats", "--json"])
    out.write_text(printed.getvalue())
    return code


async def test_a_reply_to_a_message_of_unknown_delivery_confirms_it(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path) as bot:
        await _first_reply_fails(api, bot, "server_error_after")
        [shown] = api.bot_messages(GROUP)
        api.group_message(GROUP, ANN, "yes, got it", reply_to_bot_message_id=shown.data["message_id"])
        await api.wait_until(lambda: len(api.texts(GROUP)) == 2, what="the answer to the reply")
        assert api.texts(GROUP) == [REPLY, REPLY]  # two answers to two messages; no notice
        assert await _doubts(bot, GROUP) == []


async def test_a_reply_that_never_arrived_is_told_once_and_its_button_sends_it_once(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    """A 500 before delivery looks, to the bot, like one after: nothing is sent again by itself;
    the person hears once that the reply may not have arrived, and one press brings it."""
    async with running_bot(api, tmp_path) as bot:
        doubt = await _first_reply_fails(api, bot, "server_error")
        assert api.texts(GROUP) == []
        api.group_message(GROUP, ANN, "are you there?", mention=True)
        await api.wait_until(lambda: len(api.texts(GROUP)) == 2, what="the notice and the answer")
        assert api.texts(GROUP) == [NOTICE, REPLY]
        notice = api.bot_messages(GROUP)[0]
        assert notice.reply_markup is not None
        [[button]] = notice.reply_markup["inline_keyboard"]
        assert button["callback_data"] == f"resend:{doubt.turn_id}"
        for _ in range(2):
            api.callback(GROUP, notice.data["message_id"], ANN, button["callback_data"])
        await api.wait_until(lambda: len(api.callback_answers) == 2, what="both presses answered")
        assert sorted(a["text"] for a in api.callback_answers) == sorted([SENT_AGAIN, NOTHING_TO_SEND])
        assert api.texts(GROUP) == [NOTICE, REPLY, REPLY]
        # Told once: the next message gets its answer only.
        api.group_message(GROUP, ANN, "thanks", mention=True)
        await api.wait_until(lambda: len(api.texts(GROUP)) == 4)
        assert api.texts(GROUP).count(NOTICE) == 1
        # A reaction on the copy sent again reaches the turn.
        resent = api.bot_messages(GROUP)[2]
        api.reaction(GROUP, resent.data["message_id"], ANN, old=[], new=["❤"])
        await api.wait_until(lambda: len(bot.feedback()) == 1, what="the reaction on the copy")
        assert bot.feedback()[0][0] == doubt.turn_id


async def test_someone_else_cannot_ask_for_a_persons_reply_again(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path) as bot:
        doubt = await _first_reply_fails(api, bot, "server_error")
        api.group_message(GROUP, ANN, "still there?", mention=True)
        await api.wait_until(lambda: len(api.texts(GROUP)) == 2)
        notice = api.bot_messages(GROUP)[0]
        api.callback(GROUP, notice.data["message_id"], 5151, f"resend:{doubt.turn_id}")
        await api.wait_until(lambda: len(api.callback_answers) == 1)
        assert api.callback_answers[0]["text"] == NOTHING_TO_SEND
        assert api.texts(GROUP) == [NOTICE, REPLY]


@pytest.mark.parametrize(
    ("method", "fault"),
    [
        ("sendMessageDraft", "server_error_after"),
        ("sendMessageDraft", "timeout_after"),
        ("editMessageText", "server_error_after"),
        ("editMessageText", "timeout_after"),
    ],
)
async def test_drafts_and_edits_that_landed_then_failed_leave_one_whole_reply(
    api: FakeTelegramBotApi, tmp_path: Path, method: str, fault: str
) -> None:
    reply = " ".join(f"w{n}" for n in range(40))
    policy = replace(ChatPolicy(), edit_interval_s=0.1, drafts=method == "sendMessageDraft")
    async with running_bot(api, tmp_path, inference=SlowInference(reply, 0.03), chat=policy) as bot:
        api.fail_next(method, fault)  # type: ignore[arg-type]
        chat = ANN if method == "sendMessageDraft" else GROUP
        if chat == ANN:
            api.private_message(ANN, "tell me")
        else:
            api.group_message(GROUP, ANN, "tell me", mention=True)
        await api.wait_until(lambda: api.texts(chat) == [reply], 20, what="the whole reply, once")
        await api.wait_until(lambda: any(c.failed == fault for c in api.calls_of(method)))
        assert len(api.calls_of("sendMessage")) == 1
        assert await _doubts(bot, chat) == []


@pytest.mark.parametrize("fault", ["server_error_after", "timeout_after"])
async def test_an_export_upload_that_landed_then_failed_is_sent_once(
    api: FakeTelegramBotApi, tmp_path: Path, fault: str
) -> None:
    async with running_bot(api, tmp_path):
        api.private_message(ANN, "remember that I like plums")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        api.fail_next("sendDocument", fault)  # type: ignore[arg-type]
        api.private_message(ANN, "/export")
        await api.wait_until(lambda: any(c.failed == fault for c in api.calls_of("sendDocument")), 15)
        await asyncio.sleep(1.0)  # time enough for a retry, were there one
        assert len(api.documents) == 1 and len(api.calls_of("sendDocument")) == 1
