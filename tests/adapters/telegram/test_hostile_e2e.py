"""Hostile and broken input through the real Application: odd numbers, bodies, forwards, a bad token,
a connection dropped while a reply is shown, a webhook post while stopping."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from bot.adapters.telegram.chat import ChatPolicy
from bot.core.errors import ConfigError
from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.support.fakes import SlowInference
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.telegram_updates import group_message_update


async def test_unicode_digits_and_huge_numbers_get_an_answer(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path):
        for text in ("/memories ²", "/forget ²", "/forget 99999999999999999999999", "/memories 99999999999"):
            api.private_message(ANN, text)
        await api.wait_until(lambda: len(api.texts(ANN)) == 4)
        page, forget_sup, forget_huge, far_page = api.texts(ANN)
        assert "don't remember anything" in page
        assert "/forget ID" in forget_sup and "/forget ID" in forget_huge
        assert far_page == "No more memories."


async def test_automatic_forwards_and_posts_as_a_chat_are_not_answered(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    policy = replace(ChatPolicy(), group_mode="all", edit_interval_s=0.05)
    async with running_bot(api, tmp_path, chat=policy) as bot:
        forward = group_message_update(900_001, GROUP, 777000, "a channel post", message_id=50)
        forward["message"]["is_automatic_forward"] = True
        as_chat = group_message_update(900_002, GROUP, 1087968824, "posted as the group", message_id=51)
        as_chat["message"]["sender_chat"] = forward["message"]["chat"]
        api.enqueue(forward)
        api.enqueue(as_chat)
        api.group_message(GROUP, ANN, "a person talking")
        await replies_done(api, GROUP, 1)
        assert len(api.texts(GROUP)) == 1
        assert (await bot.store.stats()).users == 1


async def test_a_connection_dropped_while_showing_still_stores_the_reply(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path, inference=SlowInference("one two three", 0.01)) as bot:
        api.fail_next("sendMessage", "reset")
        api.group_message(GROUP, ANN, "are you there?", mention=True)
        await api.wait_until(lambda: any(c.failed == "reset" for c in api.calls_of("sendMessage")))
        turns = f"telegram:{ANN}", f"telegram:{GROUP}"
        for _ in range(100):
            if len(await bot.turns(*turns)) == 2:
                break
            await asyncio.sleep(0.05)
        assert [role for role, _ in await bot.turns(*turns)] == ["user", "assistant"]
        api.group_message(GROUP, ANN, "and now?", mention=True)
        await replies_done(api, GROUP, 1)


async def test_a_refused_token_stops_the_start_without_showing_it(tmp_path: Path) -> None:
    async with FakeTelegramBotApi() as api:
        with pytest.raises(ConfigError) as refused:
            async with running_bot(api, tmp_path, token="42:another-token"):
                pass
    assert "TELEGRAM_BOT_TOKEN" in str(refused.value)
    assert "another-token" not in str(refused.value)


async def test_webhook_posts_while_stopping_are_refused_for_a_retry(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path, webhook_url="https://bot.example.org/telegram/webhook") as bot:
        adapter = bot.adapter
        secret = {"X-Telegram-Bot-Api-Secret-Token": adapter.config.secret}
        for body in (b"[1]", b"7", b'"x"', b'{"update_id": 1, "message": 5}', b"[" * 100_000):
            assert (await adapter.handle_webhook(secret, body))[0] == 400, body[:20]
        update = api.private_message(ANN, "hello")
        await adapter.stop()
        status, _ = await adapter.handle_webhook(secret, json.dumps(update).encode())
        assert status == 503
