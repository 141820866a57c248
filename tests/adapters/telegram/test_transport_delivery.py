"""The transport under faults before and after delivery: real python-telegram-bot `Bot` over
`AiohttpRequest`, against the loopback Bot API fake. A send that may have landed is never sent
again; a call that cannot repeat anything is (bot/adapters/telegram/delivery_rule.py)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from telegram import Bot, InputFile
from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut

from bot.adapters.telegram.delivery_rule import MaybeDelivered, is_idempotent
from bot.adapters.telegram.transport import AiohttpRequest
from tests.support.telegram_api import FakeTelegramBotApi

USER = 777
READ_TIMEOUT_S = 1.0


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegramBotApi]:
    async with FakeTelegramBotApi() as api:
        yield api


def _bot(base_url: str, file_url: str, *, patience_s: float = 5.0) -> Bot:
    request = AiohttpRequest(4, read_timeout=READ_TIMEOUT_S, server_error_patience_s=patience_s)
    return Bot(FakeTelegramBotApi().token, base_url=base_url, base_file_url=file_url, request=request)


@pytest.fixture
async def bot(fake: FakeTelegramBotApi) -> AsyncIterator[Bot]:
    async with _bot(fake.base_url, fake.base_file_url) as opened:
        yield opened


def test_the_rule_names_sends_and_what_may_be_repeated() -> None:
    sends = ["sendMessage", "sendDocument", "sendPhoto", "copyMessage", "forwardMessage", "sendmessage"]
    repeatable = [
        "editMessageText", "sendMessageDraft", "setMessageReaction", "answerCallbackQuery",
        "deleteMessage", "sendChatAction", "getMe", "editMessageReplyMarkup",
    ]  # fmt: skip
    assert [m for m in sends if is_idempotent(m)] == []
    assert [m for m in repeatable if not is_idempotent(m)] == []


@pytest.mark.parametrize("fault", ["server_error_after", "timeout_after"])
async def test_a_send_that_landed_and_then_failed_is_never_sent_again(
    bot: Bot, fake: FakeTelegramBotApi, fault: str
) -> None:
    fake.fail_next("sendMessage", fault)  # type: ignore[arg-type]
    with pytest.raises(MaybeDelivered):
        await bot.send_message(USER, "only once")
    assert fake.texts(USER) == ["only once"]
    assert len(fake.calls_of("sendMessage")) == 1


async def test_an_upload_that_landed_and_then_failed_is_never_sent_again(
    bot: Bot, fake: FakeTelegramBotApi
) -> None:
    fake.fail_next("sendDocument", "server_error_after")
    with pytest.raises(MaybeDelivered):
        await bot.send_document(USER, InputFile(b'{"turns": []}', filename="export.json"))
    assert len(fake.documents) == 1 and len(fake.calls_of("sendDocument")) == 1


async def test_a_500_before_delivery_on_a_send_is_not_repeated_either(
    bot: Bot, fake: FakeTelegramBotApi
) -> None:
    """The client cannot tell a 500 before delivery from one after: both are "maybe delivered"."""
    fake.fail_next("sendMessage", "server_error")
    with pytest.raises(MaybeDelivered):
        await bot.send_message(USER, "unknown")
    assert fake.texts(USER) == [] and len(fake.calls_of("sendMessage")) == 1


@pytest.mark.parametrize("fault", ["server_error", "server_error_after", "timeout_after"])
async def test_an_edit_is_repeated_until_it_shows_once(
    bot: Bot, fake: FakeTelegramBotApi, fault: str
) -> None:
    sent = await bot.send_message(USER, "first")
    fake.fail_next("editMessageText", fault)  # type: ignore[arg-type]
    try:
        await bot.edit_message_text("second", chat_id=USER, message_id=sent.message_id)
    except BadRequest as exc:  # the retry of an edit that had landed: Telegram says nothing changed
        assert "not modified" in str(exc)
    assert fake.texts(USER) == ["second"]
    assert len(fake.calls_of("editMessageText")) == 2


@pytest.mark.parametrize("fault", ["server_error", "server_error_after", "timeout_after"])
async def test_a_draft_is_repeated_and_shows(bot: Bot, fake: FakeTelegramBotApi, fault: str) -> None:
    fake.fail_next("sendMessageDraft", fault)  # type: ignore[arg-type]
    assert await bot.send_message_draft(USER, 7, "thinking")
    assert len(fake.calls_of("sendMessageDraft")) == 2
    assert fake.texts(USER) == []  # a draft is no message


async def test_flood_control_answers_are_left_to_ptb(bot: Bot, fake: FakeTelegramBotApi) -> None:
    fake.fail_next("sendMessage", "retry_after", retry_after=3)
    with pytest.raises(RetryAfter):
        await bot.send_message(USER, "later")
    assert len(fake.calls_of("sendMessage")) == 1 and fake.texts(USER) == []


async def test_a_refused_connection_is_tried_again_and_delivers_once(fake: FakeTelegramBotApi) -> None:
    """Nothing was written to a port that refuses: the send is tried again once the API is up."""
    async with _bot(fake.base_url, fake.base_file_url, patience_s=10.0) as bot:
        await fake.stop()  # the same port refuses until the fake starts on it again
        send = asyncio.create_task(bot.send_message(USER, "after the outage"))
        await asyncio.sleep(1.2)  # two refused tries
        assert not send.done()
        await fake.start()
        message = await asyncio.wait_for(send, 10)
        assert fake.texts(USER) == ["after the outage"] and message.text == "after the outage"
        assert len(fake.calls_of("sendMessage")) == 1


async def test_a_bot_api_that_cannot_be_reached_fails_the_start_at_once() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    bot = _bot(f"{base}/bot", f"{base}/file/bot", patience_s=30.0)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(NetworkError) as raised:
        await bot.initialize()  # getMe
    assert not isinstance(raised.value, MaybeDelivered | TimedOut)
    assert loop.time() - started < 2.0
    await bot.shutdown()
