"""The fake Bot API server, driven by the real python-telegram-bot: if PTB accepts its answers
and maps its errors as it maps Telegram's, the adapter's end-to-end tests can trust it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import ClientSession
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    MessageEntity,
    ReactionTypeEmoji,
    ReplyParameters,
    Update,
)
from telegram.error import (
    BadRequest,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.telegram_updates import private_message_update

USER = 4242
GROUP = -1001234567890


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegramBotApi]:
    async with FakeTelegramBotApi() as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegramBotApi) -> AsyncIterator[Bot]:
    async with Bot(fake.token, base_url=fake.base_url, base_file_url=fake.base_file_url) as client:
        yield client


async def test_get_me_describes_the_bot(bot: Bot, fake: FakeTelegramBotApi) -> None:
    me = await bot.get_me()
    assert (me.id, me.is_bot, me.username) == (123456789, True, "kindred_test_bot")
    assert me.can_join_groups and not me.can_read_all_group_messages and not me.supports_inline_queries
    assert [c.method for c in fake.calls] == ["getMe", "getMe"]  # Bot.initialize asks first


async def test_send_message_returns_a_message_ptb_parses(bot: Bot, fake: FakeTelegramBotApi) -> None:
    fake.private_message(USER, "hello", first_name="Bea")
    sent = await bot.send_message(USER, "Hi Bea", entities=[MessageEntity("bold", 0, 2)])
    assert sent.chat.type == "private" and sent.chat.first_name == "Bea"
    assert sent.from_user is not None and sent.from_user.id == bot.id
    assert sent.text == "Hi Bea" and sent.entities[0].type == "bold"
    assert sent.message_id == 2  # the user's message took 1: one counter per chat

    in_group = await bot.send_message(GROUP, "Hello all")
    assert in_group.chat.type == "supergroup" and in_group.chat.id == GROUP
    assert fake.texts(USER) == ["Hi Bea"] and fake.texts(GROUP) == ["Hello all"]


async def test_edit_changes_the_text_and_an_identical_edit_is_refused(
    bot: Bot, fake: FakeTelegramBotApi
) -> None:
    sent = await bot.send_message(USER, "Thinking")
    edited = await bot.edit_message_text("Thinking about it", chat_id=USER, message_id=sent.message_id)
    assert isinstance(edited, Message)  # True would mean an inline message
    assert edited.text == "Thinking about it" and edited.edit_date is not None
    assert fake.texts(USER) == ["Thinking about it"]
    assert fake.bot_messages(USER)[0].history == ["Thinking", "Thinking about it"]

    with pytest.raises(BadRequest, match="not modified"):
        await bot.edit_message_text("Thinking about it", chat_id=USER, message_id=sent.message_id)
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await bot.edit_message_text("x", chat_id=USER, message_id=999)


async def test_keyboard_edits_and_callback_round_trip(bot: Bot, fake: FakeTelegramBotApi) -> None:
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Forget", callback_data="forget:7")]])
    sent = await bot.send_message(USER, "Forget this?", reply_markup=keyboard)
    assert sent.reply_markup == keyboard
    # The same text with the keyboard dropped is a real change: Telegram compares both.
    await bot.edit_message_text("Forget this?", chat_id=USER, message_id=sent.message_id)
    await bot.edit_message_reply_markup(USER, sent.message_id, reply_markup=keyboard)
    with pytest.raises(BadRequest, match="not modified"):
        await bot.edit_message_reply_markup(USER, sent.message_id, reply_markup=keyboard)

    fake.callback(USER, sent.message_id, USER, "forget:7")
    (update,) = await bot.get_updates(timeout=0)
    query = update.callback_query
    assert query is not None and query.data == "forget:7" and query.from_user.id == USER
    assert query.message is not None and query.message.message_id == sent.message_id
    assert await query.answer("Forgotten")
    answer = {"callback_query_id": query.id, "text": "Forgotten", "show_alert": False}
    assert fake.callback_answers == [answer]
    with pytest.raises(BadRequest, match=r"(?i)query ID is invalid"):
        await bot.answer_callback_query("123")


# PTB 22 warns that RetryAfter.retry_after becomes a timedelta in PTB 23.
@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_injected_flood_limit_raises_retry_after_and_leaves_no_message(
    bot: Bot, fake: FakeTelegramBotApi
) -> None:
    fake.fail_next("sendMessage", "retry_after", retry_after=3)
    with pytest.raises(RetryAfter) as raised:
        await bot.send_message(USER, "one")
    assert raised.value.retry_after == 3
    assert fake.texts(USER) == []
    await bot.send_message(USER, "two")
    assert fake.texts(USER) == ["two"]
    assert [c.failed for c in fake.calls_of("sendMessage")] == ["retry_after", None]


async def test_injected_not_modified_and_chat_filter(bot: Bot, fake: FakeTelegramBotApi) -> None:
    sent = await bot.send_message(USER, "a")
    fake.fail_next("editMessageText", "not_modified", chat_id=GROUP)
    await bot.edit_message_text("b", chat_id=USER, message_id=sent.message_id)  # other chat: unaffected
    fake.fail_next("editMessageText", "not_modified")
    with pytest.raises(BadRequest, match="exactly the same"):
        await bot.edit_message_text("c", chat_id=USER, message_id=sent.message_id)
    assert fake.texts(USER) == ["b"]


async def test_blocked_user_raises_forbidden_until_unblocked(bot: Bot, fake: FakeTelegramBotApi) -> None:
    fake.fail_next("sendChatAction", "blocked")
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_chat_action(USER, "typing")
    fake.block(USER)
    with pytest.raises(Forbidden):
        await bot.send_message(USER, "anyone there?")
    assert await bot.send_message(GROUP, "others still hear me")
    fake.unblock(USER)
    await bot.send_message(USER, "back")
    assert fake.texts(USER) == ["back"]


async def test_reset_mid_poll_is_a_network_error(bot: Bot, fake: FakeTelegramBotApi) -> None:
    fake.fail_next("getUpdates", "reset")
    with pytest.raises(NetworkError) as raised:
        await bot.get_updates(timeout=1)
    # A dropped socket is not a timeout: PTB must retry it as a plain network failure.
    assert not isinstance(raised.value, TimedOut)
    assert str(raised.value).startswith("httpx.")  # RemoteProtocolError: disconnected without a response
    fake.fail_next("sendMessage", "reset")
    with pytest.raises(NetworkError):
        await bot.send_message(USER, "lost")
    assert fake.texts(USER) == [] and await bot.get_updates(timeout=0) == ()


async def test_long_poll_returns_an_update_queued_while_waiting(bot: Bot, fake: FakeTelegramBotApi) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await fake.wait_for_call("getUpdates")
    await asyncio.sleep(0.05)
    assert not poll.done()
    started = time.monotonic()
    fake.private_message(USER, "/start")
    (update,) = await asyncio.wait_for(poll, 2)
    assert time.monotonic() - started < 0.5
    message = update.message
    assert message is not None and message.text == "/start" and message.chat.type == "private"
    assert message.entities[0].type == "bot_command" and message.entities[0].length == 6


async def test_empty_long_poll_waits_its_timeout(bot: Bot) -> None:
    started = time.monotonic()
    assert await bot.get_updates(timeout=1) == ()
    assert 0.9 < time.monotonic() - started < 1.9


async def test_offset_confirms_updates(bot: Bot, fake: FakeTelegramBotApi) -> None:
    first = fake.private_message(USER, "one")
    fake.private_message(USER, "two")
    assert [u.message.text for u in await bot.get_updates() if u.message] == ["one", "two"]
    again = await bot.get_updates(offset=first["update_id"] + 1)
    assert [u.message.text for u in again if u.message] == ["two"]
    assert await bot.get_updates(offset=again[0].update_id + 1, timeout=0) == ()
    assert fake.updates == []


async def test_allowed_updates_filter_reactions(bot: Bot, fake: FakeTelegramBotApi) -> None:
    sent = await bot.send_message(GROUP, "hi")
    fake.reaction(GROUP, sent.message_id, USER, old=[], new=["👍"])
    fake.group_message(GROUP, USER, "hello", mention=True)

    updates = await bot.get_updates(allowed_updates=["message"], timeout=0)
    assert [u.message.text for u in updates if u.message] == ["@kindred_test_bot hello"]
    assert fake.allowed_updates == ["message"]
    assert updates[0].message is not None
    mention = updates[0].message.parse_entities([MessageEntity.MENTION])
    assert list(mention.values()) == ["@kindred_test_bot"]
    # Telegram's default (an empty list) leaves reactions out too.
    assert len(await bot.get_updates(allowed_updates=[], timeout=0)) == 1

    (update,) = await bot.get_updates(allowed_updates=["message_reaction"], timeout=0)
    reaction = update.message_reaction
    assert reaction is not None and reaction.chat.type == "supergroup"
    assert reaction.message_id == sent.message_id
    assert reaction.new_reaction == (ReactionTypeEmoji("👍"),)


async def test_group_reply_to_the_bot_quotes_its_message(bot: Bot, fake: FakeTelegramBotApi) -> None:
    sent = await bot.send_message(GROUP, "What do you think?")
    fake.group_message(GROUP, USER, "I agree", reply_to_bot_message_id=sent.message_id)
    (update,) = await bot.get_updates(timeout=0)
    message = update.message
    assert message is not None and message.reply_to_message is not None
    assert message.reply_to_message.from_user is not None and message.reply_to_message.from_user.id == bot.id
    assert message.message_id == sent.message_id + 1

    answer = await bot.send_message(GROUP, "Good", reply_parameters=ReplyParameters(message.message_id))
    assert answer.reply_to_message is not None and answer.reply_to_message.text == "I agree"
    with pytest.raises(BadRequest, match=r"(?i)replied not found"):
        await bot.send_message(GROUP, "?", reply_parameters=ReplyParameters(999))


async def test_send_document_keeps_bytes_and_filename(bot: Bot, fake: FakeTelegramBotApi) -> None:
    payload = bytes(range(256)) * 40 + "memories: ünïcode\n".encode()
    sent = await bot.send_document(USER, payload, filename="memories.json", caption="Your export")
    assert sent.document is not None and sent.document.file_name == "memories.json"
    assert sent.document.file_size == len(payload) and sent.caption == "Your export"
    (doc,) = fake.documents
    assert (doc.data, doc.filename, doc.caption) == (payload, "memories.json", "Your export")
    assert doc.chat_id == USER and doc.mime_type == "application/json"


async def test_drafts_commands_and_reactions_are_recorded(bot: Bot, fake: FakeTelegramBotApi) -> None:
    assert await bot.send_message_draft(USER, draft_id=7, text="Thin")
    assert await bot.send_message_draft(USER, draft_id=7, text="Thinking")
    assert fake.drafts[USER] == ["Thin", "Thinking"]
    assert fake.calls_of("sendMessageDraft")[0].params == {"chat_id": USER, "draft_id": 7, "text": "Thin"}

    await bot.set_my_commands([("memories", "What I remember"), ("forget", "Forget something")])
    assert [c.command for c in await bot.get_my_commands()] == ["memories", "forget"]
    assert fake.commands[0] == {"command": "memories", "description": "What I remember"}

    fake.private_message(USER, "I got the job!")
    assert await bot.set_message_reaction(USER, 1, "🎉")
    assert fake.bot_reactions == [
        {"chat_id": USER, "message_id": 1, "reaction": [{"type": "emoji", "emoji": "🎉"}]}
    ]


async def test_webhook_blocks_get_updates(bot: Bot, fake: FakeTelegramBotApi) -> None:
    with pytest.raises(BadRequest, match=r"(?i)HTTPS URL must be provided"):
        await bot.set_webhook("http://127.0.0.1:8443/hook")
    assert await bot.set_webhook(
        "https://kindred.example/hook", secret_token="s3cret", allowed_updates=["message", "callback_query"]
    )
    assert fake.webhook == {
        "url": "https://kindred.example/hook",
        "secret_token": "s3cret",
        "allowed_updates": ["message", "callback_query"],
    }
    info = await bot.get_webhook_info()
    assert info.url == "https://kindred.example/hook"
    assert info.allowed_updates == ("message", "callback_query")
    with pytest.raises(Conflict, match=r"(?i)webhook is active"):
        await bot.get_updates(timeout=0)
    assert await bot.delete_webhook()
    assert await bot.get_updates(timeout=0) == ()


async def test_a_second_poll_ends_the_first_with_conflict(bot: Bot, fake: FakeTelegramBotApi) -> None:
    first = asyncio.create_task(bot.get_updates(timeout=5))
    await fake.wait_for_call("getUpdates")
    # PTB gives getUpdates a pool of one connection, so a second poller needs its own Bot.
    async with Bot(fake.token, base_url=fake.base_url) as second_instance:
        await second_instance.get_updates(timeout=0)
    with pytest.raises(Conflict, match=r"(?i)terminated by other getUpdates request"):
        await asyncio.wait_for(first, 2)


async def test_wrong_token_and_unknown_method(fake: FakeTelegramBotApi, bot: Bot) -> None:
    with pytest.raises(InvalidToken):
        async with Bot("987654321:AAwrong", base_url=fake.base_url):
            pass
    # Bot.do_api_request turns Telegram's 404 for a method into its own error.
    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("noSuchMethod")
    assert fake.calls[-1].failed == "Not Found"


async def test_pure_builder_is_what_ptb_expects_from_a_webhook(bot: Bot) -> None:
    from telegram import Update

    payload = private_message_update(5, USER, "/memories extra", message_id=9)
    update = Update.de_json(payload, bot)
    assert update.effective_chat is not None and update.effective_chat.type == "private"
    assert update.message is not None and update.message.text == "/memories extra"
    assert update.message.parse_entities() == {update.message.entities[0]: "/memories"}


async def test_wait_until_fails_with_context(fake: FakeTelegramBotApi) -> None:
    with pytest.raises(AssertionError, match=r"2× sendMessage.*last calls: none"):
        await fake.wait_for_call("sendMessage", count=2, timeout=0.05)


async def test_raw_http_shapes_json_body_and_query_string(fake: FakeTelegramBotApi) -> None:
    send = f"{fake.base_url}{fake.token}/sendMessage"
    async with ClientSession() as http:
        async with http.get(f"{fake.base_url}{fake.token}/getMe?x=1") as response:
            assert response.status == 200 and (await response.json())["result"]["is_bot"] is True
        async with http.post(send, json={"chat_id": USER, "text": "[1]"}) as response:
            assert (await response.json())["result"]["text"] == "[1]"
        async with http.post(send, data={"chat_id": str(USER), "text": "7"}) as response:
            assert response.status == 200
        async with http.post(f"{fake.base_url}1:wrong/getMe") as response:
            assert response.status == 401
            assert await response.json() == {"ok": False, "error_code": 401, "description": "Unauthorized"}
        fake.fail_next("sendMessage", "retry_after", retry_after=5)
        async with http.post(send, data={"chat_id": "1", "text": "x"}) as response:
            assert response.status == 429
            assert await response.json() == {
                "ok": False,
                "error_code": 429,
                "description": "Too Many Requests: retry after 5",
                "parameters": {"retry_after": 5},
            }
    # Text that looks like JSON stays text; ids arrive as strings in a form and become ints.
    assert fake.texts(USER) == ["[1]", "7"]


async def test_application_polls_and_replies_after_a_dropped_poll(fake: FakeTelegramBotApi) -> None:
    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        await update.effective_message.reply_text(f"echo: {update.effective_message.text}")

    app = Application.builder().token(fake.token).base_url(fake.base_url).build()
    app.add_handler(MessageHandler(filters.TEXT, echo))
    # PTB's updater waits 1 s after a NetworkError before polling again.
    fake.fail_next("getUpdates", "reset")
    fake.private_message(USER, "hi")
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0, timeout=1, allowed_updates=["message"])
        await fake.wait_until(lambda: fake.texts(USER) == ["echo: hi"], 3)
        await app.updater.stop()
        await app.stop()
    assert [c.failed for c in fake.calls_of("getUpdates")][:2] == ["reset", None]
    assert fake.allowed_updates == ["message"] and fake.updates == []
