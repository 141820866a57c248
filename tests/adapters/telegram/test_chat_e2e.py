"""People chatting with the real Application over HTTP: private chats, groups, streaming, long replies."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path

from bot.adapters.telegram.chat import ChatPolicy
from bot.core.models import ChatMessage, StreamEnd
from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.support.fakes import SlowInference
from tests.support.telegram_api import FakeTelegramBotApi

ANN_KEY = f"telegram:{ANN}"


async def test_a_private_chat_previews_a_draft_then_sends_the_reply_with_feedback_buttons(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    inference = SlowInference("Miso sounds like a lovely name for a cat.", delay_s=0.02)
    async with running_bot(api, tmp_path, inference=inference) as bot:
        api.private_message(ANN, "I adopted a cat called Miso")
        await api.wait_until(lambda: api.texts(ANN) == [inference.reply])
        await api.wait_until(lambda: api.bot_messages(ANN)[-1].reply_markup is not None)
        assert api.drafts[ANN], "the reply was previewed with sendMessageDraft"
        assert all(inference.reply.startswith(draft) for draft in api.drafts[ANN])
        assert not api.calls_of("editMessageText"), "a private chat needs no edits"
        assert await bot.turns(ANN_KEY, ANN_KEY) == [
            ("user", "I adopted a cat called Miso"),
            ("assistant", inference.reply),
        ]
        api.private_message(ANN, "what is my cat called?")
        await api.wait_until(lambda: len(api.texts(ANN)) == 2)
        prompt = "\n".join(message.content for message in inference.prompts[-1])
        assert "Miso" in prompt, "the earlier message reached the next prompt"
    assert [c["command"] for c in api.commands] == [
        "start",
        "help",
        "memories",
        "forget",
        "confirm",
        "correct",
        "export",
        "persona",
        "model",
        "privacy",
        "voice",
        "usage",
        "settings",
        "app",
        "apps",
        "proactive",
        "reminders",
    ]
    assert "message_reaction" in api.allowed_updates, "reactions must be asked for by name"


async def test_a_group_is_answered_only_when_mentioned_or_replied_to(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.group_message(GROUP, ANN, "just chatting among friends")
        api.group_message(GROUP, ANN, "what do you think?", mention=True)
        await api.wait_until(lambda: len(api.texts(GROUP)) == 1)
        answer = api.bot_messages(GROUP)[0]
        assert answer.data["reply_to_message"]["text"].endswith("what do you think?")
        api.group_message(GROUP, 77, "and you, bot?", reply_to_bot_message_id=answer.data["message_id"])
        await replies_done(api, GROUP, 2)
        group = f"telegram:{GROUP}"
        # The mention is not part of what is remembered, and the unaddressed line is not stored.
        assert await bot.turns(ANN_KEY, group) == [
            ("user", "what do you think?"),
            ("assistant", "Lovely to hear from you."),
        ]
        assert [role for role, _ in await bot.turns("telegram:77", group)] == ["user", "assistant"]


async def test_group_mode_off_ignores_even_mentions(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path, chat=replace(ChatPolicy(), group_mode="off")):
        api.group_message(GROUP, ANN, "hello?", mention=True)
        api.private_message(ANN, "still there?")
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        assert api.texts(GROUP) == []


async def test_group_replies_stream_by_edits_at_most_about_once_a_second(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    reply = " ".join(f"word{n}" for n in range(50))
    inference = SlowInference(reply, delay_s=0.05)  # 2.5 s of writing
    policy = replace(ChatPolicy(), edit_interval_s=1.0)
    async with running_bot(api, tmp_path, inference=inference, chat=policy):
        api.group_message(GROUP, ANN, "tell me a long story", mention=True)
        await api.wait_until(lambda: api.texts(GROUP) == [reply], timeout=15)
        sends, edits = api.calls_of("sendMessage"), api.calls_of("editMessageText")
        assert len(sends) == 1 and 2 <= len(edits) <= 4
        times = [sends[0].at] + [edit.at for edit in edits]
        gaps = [later - earlier for earlier, later in itertools.pairwise(times[:-1])]
        assert all(gap >= 0.9 for gap in gaps), gaps  # the final edit may come sooner
        history = api.bot_messages(GROUP)[0].history
        assert len(history) == 1 + len(edits) and history[0] != reply, "the text grew while written"


async def test_a_5000_character_reply_arrives_whole_in_two_messages(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    reply = " ".join(f"sentence{n:04d}" for n in range(455))  # 5,004 characters
    assert len(reply) > 5000
    async with running_bot(api, tmp_path, inference=SlowInference(reply, delay_s=0)) as bot:
        api.private_message(ANN, "write me something long")
        await api.wait_until(lambda: len(api.texts(ANN)) == 2)
        texts = api.texts(ANN)
        assert all(len(text) <= 4096 for text in texts)
        assert " ".join(texts) == reply
        # A reaction on the second piece rates the same stored reply.
        second = api.bot_messages(ANN)[1].data["message_id"]
        api.reaction(ANN, second, ANN, old=[], new=["❤"])
        await api.wait_until(lambda: len(bot.feedback()) == 1)
        assert bot.feedback()[0][3:] == ("❤", 1.0)


async def test_hostile_messages_get_a_clear_answer(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.private_message(ANN, "\u200b\u0007   ")  # nothing but invisible and control characters
        await api.wait_until(lambda: len(api.texts(ANN)) == 1)
        assert "didn't get any text" in api.texts(ANN)[0]
        api.private_message(ANN, "a" * 4096)
        assert (await replies_done(api, ANN, 1))[1] == "Lovely to hear from you."
        assert [role for role, _ in await bot.turns(ANN_KEY, ANN_KEY)] == ["user", "assistant"]


class GatedInference(SlowInference):
    """Holds any reply whose message contains "wait" until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__("Here I am.", delay_s=0)
        self.gate = asyncio.Event()

    async def stream(  # type: ignore[override]
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        if "wait" in messages[-1].content:
            await self.gate.wait()
        chunks = super().stream(messages, max_tokens=max_tokens, adapter=adapter, ending=ending, seed=seed)
        async for chunk in chunks:
            yield chunk


async def test_a_slow_chat_holds_up_no_other_and_a_chat_keeps_its_order(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    inference = GatedInference()
    async with running_bot(api, tmp_path, inference=inference) as bot:
        api.private_message(ANN, "please wait for it")
        api.private_message(ANN, "and then this")
        api.private_message(77, "hello, anyone?")
        assert await replies_done(api, 77, 1) == ["Here I am."], "another chat is answered meanwhile"
        assert api.texts(ANN) == [], "Ann's second message waits for her first"
        inference.gate.set()
        await replies_done(api, ANN, 2)
        said = [text for role, text in await bot.turns(ANN_KEY, ANN_KEY)]
        assert said == ["please wait for it", "Here I am.", "and then this", "Here I am."]
