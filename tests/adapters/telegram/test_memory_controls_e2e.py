"""/confirm and /correct through the real Application: what /memories shows afterwards, the clear
answers to bad ids, and that nobody can revise another person's memory."""

from __future__ import annotations

from pathlib import Path

from bot.core.memory.controls import MAX_CORRECTION_CHARS
from tests.adapters.telegram.conftest import ANN, GROUP, running_bot
from tests.adapters.telegram.test_commands_e2e import ANN_KEY, remember
from tests.support.telegram_api import FakeTelegramBotApi

BEN = 77


async def answers(api: FakeTelegramBotApi, chat_id: int, *lines: str) -> list[str]:
    """Send each line as `chat_id`'s person and return the bot's answers to them, in order."""
    before = len(api.texts(chat_id))
    for line in lines:
        api.private_message(chat_id, line)
    await api.wait_until(lambda: len(api.texts(chat_id)) == before + len(lines), what="the answers")
    return api.texts(chat_id)[before:]


async def test_confirm_then_memories_shows_it_confirmed(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        ids = await remember(bot.store, 2)
        confirmed, listing = await answers(api, ANN, f"/confirm #{ids[0]}", "/memories")
        assert confirmed == f"Thanks, memory #{ids[0]} is confirmed. I'll rely on it."
        assert f"#{ids[0]} · turn · 2 d ago · [confirmed] fact 0" in listing
        assert f"#{ids[1]} · turn · 1 d ago · fact 1" in listing
        (memory,) = await bot.store.curation.get_memories(ANN_KEY, [ids[0]])
        assert memory.verification == 1.0


async def test_correct_replaces_the_memory(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        ids = await remember(bot.store, 2)
        corrected, listing = await answers(api, ANN, f"/correct {ids[1]}   I moved to  Lisbon", "/memories")
        new_id = max(memory.id for memory in await bot.store.memories.list_memories(ANN_KEY, 10))
        assert (
            corrected
            == f"Corrected: #{new_id} now says “I moved to Lisbon”, and #{ids[1]} will not come up again."
        )
        assert f"#{new_id} · turn · just now · [confirmed] I moved to Lisbon" in listing
        assert f"#{ids[1]} · turn · 1 d ago · [replaced by #{new_id}] fact 1" in listing
        (old,) = await bot.store.curation.get_memories(ANN_KEY, [ids[1]])
        assert (old.status, old.superseded_by, old.text) == ("superseded", new_id, "fact 1")


async def test_bad_ids_and_text_get_a_clear_answer(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        ids = await remember(bot.store, 1)
        too_long = "x" * (MAX_CORRECTION_CHARS + 1)
        lines = [
            "/confirm",
            "/confirm abc",
            "/confirm ²",
            "/confirm ١٢",
            "/confirm 99999",
            "/confirm 1; DROP TABLE x",
        ]
        lines += [
            "/correct",
            f"/correct {ids[0]}",
            "/correct abc new",
            "/correct ² new",
            "/correct 99999 new",
        ]
        lines.append(f"/correct {ids[0]} {too_long}")
        found = await answers(api, ANN, *lines)
        bare, letters, superscript, arabic, missing, hostile = found[:6]
        assert all("/confirm ID" in text for text in (bare, letters, superscript, arabic, hostile))
        assert missing == "I have no memory #99999 of yours. /memories lists them."
        bare, no_text, letters, superscript, missing, huge = found[6:]
        assert all("/correct ID new text" in text for text in (bare, no_text, letters, superscript))
        assert missing == "I have no memory #99999 of yours. /memories lists them."
        assert huge == f"Please keep a correction under {MAX_CORRECTION_CHARS} characters."
        (memory,) = await bot.store.memories.list_memories(ANN_KEY, 10)
        assert (memory.text, memory.status, memory.verification) == ("fact 0", "active", 0.0)


async def test_nobody_can_revise_another_persons_memory(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        ids = await remember(bot.store, 1)
        confirm, correct = await answers(api, BEN, f"/confirm {ids[0]}", f"/correct {ids[0]} Ben was here")
        api.group_message(GROUP, BEN, f"/confirm {ids[0]}")
        await api.wait_until(lambda: len(api.texts(GROUP)) == 1)
        for answer in (confirm, correct, api.texts(GROUP)[0]):
            assert answer == f"I have no memory #{ids[0]} of yours. /memories lists them."
        (memory,) = await bot.store.memories.list_memories(ANN_KEY, 10)
        assert (memory.text, memory.status, memory.verification) == ("fact 0", "active", 0.0)
        assert await bot.store.memories.memory_count(f"telegram:{BEN}") == 0
