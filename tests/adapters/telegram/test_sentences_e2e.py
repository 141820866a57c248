"""Whole sentences through the real Application over the loopback Bot API: a reply the token budget
cuts may stream its tail, but the final message (and the stored turn) ends at its last whole
sentence, in a private chat (drafts) and in a group (edits), also when the tail had spilled past
Telegram's 4,096 units into what would be a second message."""

from __future__ import annotations

from pathlib import Path

from bot.adapters.telegram.surface import MESSAGE_LIMIT
from tests.adapters.telegram.conftest import ANN, GROUP, running_bot
from tests.support.fakes import SlowInference
from tests.support.telegram_api import FakeTelegramBotApi

ANN_KEY = f"telegram:{ANN}"
TAIL = "If you're interested, I could even design a whole plan for the"
WHOLE = "Sure, happy to help with that. Let's start with the mornings."


def budget_of(reply: str) -> int:
    """A budget the reply runs into: every word is written, and it is cut at the last one."""
    return len(reply.split(" "))


async def test_a_private_chat_gets_the_whole_sentences_of_a_cut_reply(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    reply = f"{WHOLE} {TAIL}"
    writing = SlowInference(reply, 0.02)
    async with running_bot(api, tmp_path, inference=writing, max_new_tokens=budget_of(reply)) as bot:
        api.private_message(ANN, "help me plan my week")
        await api.wait_until(lambda: api.texts(ANN) == [WHOLE] and api.bot_messages(ANN)[0].reply_markup)
        assert any(draft.startswith(f"{WHOLE} If") for draft in api.drafts[ANN]), "the tail streamed"
        assert await bot.turns(ANN_KEY, ANN_KEY) == [("user", "help me plan my week"), ("assistant", WHOLE)]


async def test_a_group_sees_the_tail_stream_and_the_final_edit_drop_it(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    reply = f"{WHOLE} {TAIL}"
    writing = SlowInference(reply, 0.02)
    async with running_bot(api, tmp_path, inference=writing, max_new_tokens=budget_of(reply)) as bot:
        api.group_message(GROUP, ANN, "help me plan my week", mention=True)
        await api.wait_until(lambda: api.texts(GROUP) == [WHOLE] and api.bot_messages(GROUP)[0].reply_markup)
        history = api.bot_messages(GROUP)[0].history
        assert any(version.startswith(f"{WHOLE} If") for version in history), "the tail streamed"
        assert history[-1] == WHOLE
        assert [text for _, text in await bot.turns(ANN_KEY, f"telegram:{GROUP}")][-1] == WHOLE


async def test_a_tail_that_spilled_past_one_message_leaves_no_message_behind(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    # Long words, one a sentence: few tokens, so that the tail streams for long enough to be shown.
    sentences = " ".join(f"Sentence-number-{n:04d}-is-here-and-it-is-long." for n in range(91))  # 4,094
    reply = sentences + " And-then" + " there-is-more-and-more" * 12
    assert len(sentences) <= MESSAGE_LIMIT < len(reply), "only the tail needs a second message"
    whole = sentences
    async with running_bot(
        api, tmp_path, inference=SlowInference(reply, 0.01), max_new_tokens=budget_of(reply)
    ) as bot:
        api.group_message(GROUP, ANN, "write me something long", mention=True)
        await api.wait_until(lambda: any(m.reply_markup for m in api.bot_messages(GROUP)), timeout=60)
        assert api.texts(GROUP) == [whole]
        assert not any("there-is" in text for text in api.deleted[GROUP]), "never posted alone"
        assert [text for _, text in await bot.turns(ANN_KEY, f"telegram:{GROUP}")][-1] == whole


async def test_a_reply_that_ended_by_itself_is_sent_as_written(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    ended = "ok, see you then, and good luck"
    async with running_bot(api, tmp_path, inference=SlowInference(ended, 0.02), max_new_tokens=96):
        api.group_message(GROUP, ANN, "bye", mention=True)
        await api.wait_until(lambda: api.texts(GROUP) == [ended] and api.bot_messages(GROUP)[0].reply_markup)
