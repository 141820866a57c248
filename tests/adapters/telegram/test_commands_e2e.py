"""Slash commands and their buttons through the real Application: memories, forget, export, texts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.adapters.telegram.commands import unknown_command_text
from bot.core.models import NewMemory
from bot.store.sqlite.store import SqliteStore
from tests.adapters.telegram.conftest import ANN, GROUP, PERSONA, running_bot
from tests.support.fakes import HashEmbedder
from tests.support.telegram_api import FakeTelegramBotApi

ANN_KEY = f"telegram:{ANN}"
EMB = HashEmbedder()


async def remember(store: SqliteStore, count: int) -> list[int]:
    now = datetime.now(UTC)
    return await store.memories.add_memories(
        [
            NewMemory(
                ANN_KEY, f"fact {n}", "user", now - timedelta(days=count - n), EMB.vector(f"fact {n}"), "h"
            )
            for n in range(count)
        ]
    )


def buttons(api: FakeTelegramBotApi, chat_id: int, index: int = -1) -> list[tuple[str, str]]:
    markup = api.bot_messages(chat_id)[index].reply_markup or {}
    return [(b["text"], b["callback_data"]) for row in markup.get("inline_keyboard", []) for b in row]


async def test_memories_pages_newest_first_with_buttons(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        ids = await remember(bot.store, 12)
        api.private_message(ANN, "/memories")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        first = api.texts(ANN)[0]
        assert first.startswith("Memories, page 1") and f"#{ids[-1]} · turn · 1 d ago · fact 11" in first
        assert buttons(api, ANN) == [("Older ›", "mem:2")]
        message_id = api.bot_messages(ANN)[0].data["message_id"]
        api.callback(ANN, message_id, ANN, "mem:2")
        await api.wait_until(lambda: api.texts(ANN)[0].startswith("Memories, page 2"))
        assert f"#{ids[6]} " in api.texts(ANN)[0] and f"#{ids[7]} " not in api.texts(ANN)[0]
        assert buttons(api, ANN) == [("‹ Newer", "mem:1"), ("Older ›", "mem:3")]
        api.private_message(ANN, "/memories 3")
        await api.wait_until(lambda: len(api.texts(ANN)) == 2)
        assert f"#{ids[0]} " in api.texts(ANN)[1] and buttons(api, ANN) == [("‹ Newer", "mem:2")]
        api.private_message(ANN, "/memories nonsense")
        await api.wait_until(lambda: len(api.texts(ANN)) == 3)
        assert api.texts(ANN)[2].startswith("Memories, page 1")


async def test_memories_and_export_stay_out_of_groups(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        await remember(bot.store, 2)
        api.group_message(GROUP, ANN, "/memories")
        api.group_message(GROUP, ANN, "/export")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 2)
        assert all("private chat" in text for text in api.texts(GROUP))
        assert not api.documents


async def test_forget_one_and_bad_arguments(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        ids = await remember(bot.store, 3)
        for text in (f"/forget {ids[1]}", f"/forget {ids[1]}", "/forget", "/forget 1; DROP TABLE x"):
            api.private_message(ANN, text)
        await api.wait_until(lambda: len(api.texts(ANN)) == 4)
        forgot, again, bare, hostile = api.texts(ANN)
        assert forgot.startswith(f"Forgotten: memory #{ids[1]}")
        assert "no memory" in again
        assert "/forget ID" in bare and "/forget ID" in hostile
        assert await bot.store.memories.memory_count(ANN_KEY) == 2


async def test_forget_all_needs_the_owners_confirmation(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        await remember(bot.store, 3)
        api.group_message(GROUP, ANN, "/forget all")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 1)
        assert "Are you sure?" in api.texts(GROUP)[0]
        (_, yes_data), (_, no_data) = buttons(api, GROUP)
        message_id = api.bot_messages(GROUP)[0].data["message_id"]
        api.callback(GROUP, message_id, 77, yes_data)  # someone else presses "yes"
        await api.wait_until(lambda: len(api.callback_answers) == 1)
        assert "Only the person who asked" in str(api.callback_answers[0])
        assert await bot.store.memories.memory_count(ANN_KEY) == 3
        api.callback(GROUP, message_id, ANN, no_data)
        await api.wait_until(lambda: api.texts(GROUP)[0].startswith("Kept."))
        api.callback(GROUP, message_id, ANN, yes_data)
        await api.wait_until(lambda: api.texts(GROUP)[0].startswith("Done."))
        assert "(3 memories)" in api.texts(GROUP)[0]
        assert await bot.store.memories.memory_count(ANN_KEY) == 0


async def test_export_sends_a_jsonl_file_that_import_reads(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.private_message(ANN, "/export")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        assert "nothing to export" in api.texts(ANN)[0]
        await remember(bot.store, 4)
        api.private_message(ANN, "/export")
        await api.wait_until(lambda: len(api.documents) == 1)
        document = api.documents[0]
        assert document.filename.startswith("kindred-memories-") and document.filename.endswith(".jsonl")
        rows = [json.loads(line) for line in document.data.decode("utf-8").splitlines()]
        assert [row["text"] for row in rows] == [f"fact {n}" for n in range(4)]
        assert {"id", "kind", "text", "speaker", "timestamp", "meta"} <= rows[0].keys()


async def test_an_export_too_big_to_send_is_refused_in_words(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        await remember(bot.store, 30)
        bot.adapter.services.controls.max_export_bytes = 2048
        api.private_message(ANN, "/export")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        assert "more than 2 KiB, too much to send as one file here" in api.texts(ANN)[0]
        assert api.documents == []


async def test_the_simple_commands_answer(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path):
        for command in ("/start", "/help", "/persona", "/privacy", "/app", "/stats"):
            api.private_message(ANN, command)
        await api.wait_until(lambda: len(api.texts(ANN)) == 6)
        start, help_, persona, privacy, app, stats = api.texts(ANN)
        assert start.startswith("Hi Ann!") and "/memories" in start
        assert "/forget" in help_
        assert PERSONA in persona
        assert "/export" in privacy
        assert "coming soon" in app
        assert "admins" in stats, "not an admin: /stats is refused"


async def test_an_unknown_command_is_answered_unless_it_is_another_bots(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.private_message(ANN, "/weather tomorrow")
        api.private_message(ANN, "/Help")  # a known one, in any case, is still itself
        api.private_message(ANN, "/export@some_other_bot")  # another bot's: not answered
        api.group_message(GROUP, ANN, "/weather")  # in a group, bare: maybe another bot's
        api.group_message(GROUP, ANN, "/weather@kindred_test_bot")
        # An entity that ends inside a surrogate pair, as no real client sends: still words back.
        update = api.private_message(ANN, "/😀")
        update["message"]["entities"] = [{"type": "bot_command", "offset": 0, "length": 2}]
        api.private_message(ANN, "hello")
        await api.wait_until(lambda: len(api.texts(ANN)) == 4 and len(api.texts(GROUP)) == 1)
        turns = await bot.turns(ANN_KEY, ANN_KEY)
    unknown, helped, odd, chatted = api.texts(ANN)
    assert unknown == "I don't know /weather; try /help."
    assert odd == "I don't know that command; try /help."
    assert helped.startswith("I'm Kindred") and chatted == "Lovely to hear from you."
    assert api.texts(GROUP) == ["I don't know /weather; try /help."]
    assert [text for role, text in turns if role == "user"] == ["hello"]  # a command is not a turn


def test_an_unknown_commands_name_is_echoed_only_when_telegram_could_have_sent_it() -> None:
    assert unknown_command_text("weather") == "I don't know /weather; try /help."
    for odd in ("we\x00ther", "שלום", "x" * 33, "", None):
        assert unknown_command_text(odd) == "I don't know that command; try /help."
