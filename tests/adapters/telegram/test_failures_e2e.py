"""Telegram misbehaving: flood control, "not modified", a blocked bot, a dropped poll. The bot keeps
serving, and no message or feedback is lost."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from bot.adapters.telegram.chat import ChatPolicy
from bot.core.chat.access import NOT_ALLOWED, Access
from bot.core.chat.ratelimit import RateLimiter
from bot.shared_state.local_buckets import LocalBuckets
from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.support.fakes import SlowInference
from tests.support.telegram_api import FakeTelegramBotApi

BOB = 5151
NOTICE = "My last reply may not have reached you: “Lovely to hear from you.”"  # it quotes the reply


async def test_flood_control_is_waited_out(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.fail_next("sendMessage", "retry_after", retry_after=1)
        api.private_message(ANN, "hello")
        assert await replies_done(api, ANN, 1) == ["Lovely to hear from you."]
        failed = [call for call in api.calls_of("sendMessage") if call.failed]
        assert len(failed) == 1 and failed[0].failed == "retry_after"
        api.reaction(ANN, api.bot_messages(ANN)[0].data["message_id"], ANN, old=[], new=["👍"])
        await api.wait_until(lambda: len(bot.feedback()) == 1)


@pytest.mark.slow
async def test_flood_control_for_seconds_on_end_is_waited_out_and_a_command_is_answered(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    """bench/soak.py: after five 429s in a row (retry_after 1) PTB's rate limiter gave up, and the
    answer of a command sent meanwhile was lost."""
    async with running_bot(api, tmp_path):
        api.outage("retry_after", 7.0, retry_after=1)
        api.private_message(ANN, "/privacy")
        await api.wait_until(lambda: len(api.bot_messages(ANN)) == 1, 20, what="the answer to /privacy")
        assert sum(1 for call in api.calls_of("sendMessage") if call.failed == "retry_after") >= 6
        assert "/export" in api.texts(ANN)[0]


@pytest.mark.parametrize("fault", ["server_error", "server_error_after"])
async def test_a_commands_answer_that_may_have_landed_is_not_sent_again_and_an_admin_sees_it_once(
    api: FakeTelegramBotApi, tmp_path: Path, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A command's answer is a read, not a stored turn: a send that may have landed (a 500 before
    or after the fake stored it) is neither sent again nor recorded as of unknown delivery; one
    warning says so, without the answer's words; the person repeats the command."""
    async with running_bot(api, tmp_path) as bot:
        with caplog.at_level(logging.WARNING, logger="bot.adapters.telegram.adapter"):
            api.fail_next("sendMessage", fault, chat_id=ANN)  # type: ignore[arg-type]
            api.private_message(ANN, "/privacy")
            await api.wait_until(lambda: any(c.failed == fault for c in api.calls_of("sendMessage")))
            await asyncio.sleep(0.5)  # time for a second send, which must not come
            assert len(api.calls_of("sendMessage")) == 1
            assert len(api.texts(ANN)) == (1 if fault == "server_error_after" else 0)
            warned = [r.getMessage() for r in caplog.records if "may not have arrived" in r.getMessage()]
            assert len(warned) == 1 and str(ANN) in warned[0], warned
            assert "/export" not in warned[0] and "privacy" not in warned[0].lower()
            assert await bot.store.deliveries.waiting("telegram", str(ANN)) == []
            api.private_message(ANN, "/privacy")  # the person asks again
            await api.wait_until(lambda: any("/export" in text for text in api.texts(ANN)))


@pytest.mark.slow
async def test_a_bad_spell_of_server_errors_sends_nothing_twice_and_the_reply_comes_on_request(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    """bench/soak.py: Telegram answering 500 for a few seconds. A 500 may come after delivery, so
    the send is not repeated ([steady]); the person hears at their next message that the reply may
    not have arrived, and its button brings it, once."""
    async with running_bot(api, tmp_path) as bot:
        api.outage("server_error", 2.0)
        api.private_message(ANN, "hello")
        await api.wait_until(lambda: any(c.failed == "server_error" for c in api.calls_of("sendMessage")))
        assert len(api.calls_of("sendMessage")) == 1 and api.texts(ANN) == []
        await asyncio.sleep(2.0)  # the bad spell ends
        api.private_message(ANN, "hello?")
        await api.wait_until(lambda: len(api.texts(ANN)) == 2, 10, what="the notice and the answer")
        assert api.texts(ANN) == [NOTICE, "Lovely to hear from you."]
        notice = api.bot_messages(ANN)[0]
        assert notice.reply_markup is not None
        [[button]] = notice.reply_markup["inline_keyboard"]
        api.callback(ANN, notice.data["message_id"], ANN, button["callback_data"])
        await api.wait_until(lambda: len(api.texts(ANN)) == 3, what="the reply sent again")
        assert api.texts(ANN)[2] == "Lovely to hear from you."
        api.reaction(ANN, api.bot_messages(ANN)[2].data["message_id"], ANN, old=[], new=["👍"])
        await api.wait_until(lambda: len(bot.feedback()) == 1)


async def test_not_modified_is_not_an_error(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    reply = " ".join(f"w{n}" for n in range(30))
    policy = replace(ChatPolicy(), edit_interval_s=0.1)
    async with running_bot(api, tmp_path, inference=SlowInference(reply, 0.02), chat=policy):
        api.fail_next("editMessageText", "not_modified", times=2)
        api.group_message(GROUP, ANN, "go on", mention=True)
        assert await replies_done(api, GROUP, 1) == [reply]
        assert sum(1 for call in api.calls_of("editMessageText") if call.failed) == 2


async def test_a_person_who_blocked_the_bot_is_marked_inactive_and_nothing_is_lost(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.block(ANN)
        api.private_message(ANN, "remember that I love plums")
        api.private_message(BOB, "hi there")
        await replies_done(api, BOB, 1)
        ann = f"telegram:{ANN}"
        await api.wait_until(lambda: any(call.failed for call in api.calls), what="a 403")
        for _ in range(100):  # the mark is written just after the refused send
            if not await bot.store.turns.is_user_active(ann):
                break
            await asyncio.sleep(0.05)
        assert not await bot.store.turns.is_user_active(ann)
        # Her words and the reply she could not see are both kept.
        assert [role for role, _ in await bot.turns(ann, ann)] == ["user", "assistant"]
        sends_while_blocked = len([c for c in api.calls if c.params.get("chat_id") == ANN])
        api.unblock(ANN)
        api.private_message(ANN, "I'm back")
        assert await replies_done(api, ANN, 1) == ["Lovely to hear from you."]
        assert await bot.store.turns.is_user_active(ann)
        assert sends_while_blocked <= 3, "a blocked chat is not retried over and over"


async def test_a_connection_dropped_mid_poll_loses_no_update(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        await api.wait_for_call("getUpdates")
        api.fail_next("getUpdates", "reset")
        api.private_message(ANN, "are you still there?")
        assert await replies_done(api, ANN, 1, wait_s=15) == ["Lovely to hear from you."]
        assert any(call.failed == "reset" for call in api.calls_of("getUpdates"))
        assert len(await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}")) == 2


async def test_a_person_not_on_the_allowlist_is_told_and_nothing_is_stored(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    access = Access(frozenset({f"telegram:{BOB}", f"telegram-chat:{GROUP}"}))
    async with running_bot(api, tmp_path, access=access) as bot:
        api.private_message(ANN, "let me in")
        api.private_message(ANN, "/memories")
        api.group_message(GROUP, ANN, "hello from the allowed group", mention=True)
        await api.wait_until(lambda: len(api.texts(ANN)) == 2)
        assert api.texts(ANN) == [NOT_ALLOWED, NOT_ALLOWED]
        await replies_done(api, GROUP, 1)
        assert await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}") == []


async def test_a_flood_of_messages_gets_a_friendly_wait(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    limiter = RateLimiter(per_minute=1, burst=2, buckets=LocalBuckets())
    async with running_bot(api, tmp_path, limiter=limiter) as bot:
        for n in range(3):
            api.private_message(ANN, f"message {n}")
        await api.wait_until(lambda: len(api.texts(ANN)) == 3)
        assert "faster than I can think" in api.texts(ANN)[2]
        assert [
            text for role, text in await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}") if role == "user"
        ] == [
            "message 0",
            "message 1",
        ]
