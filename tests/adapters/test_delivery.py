"""The one reply delivery, checked once against every platform's real surface: Telegram's over the
loopback Bot API, Discord's over loopback REST, and the console's over a captured stream.

The events are the core's own (`ReplyChunk`, `ReplyDone`, `Refusal`), scripted; the reply's turn is
a real one in a real SQLite store, so linking is checked where reactions will look for it.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import cast

import discord
import pytest
import telegram

from bot.adapters.console import TERMINAL, ConsoleSurface
from bot.adapters.delivery import SORRY, Delivered, Gone, Layout, LinkTo, NotShown, Surface, deliver
from bot.adapters.discord import options as discord_options
from bot.adapters.discord.context import Unlinked
from bot.adapters.discord.reply import DiscordReply
from bot.adapters.discord.surfaces import ChannelSurface
from bot.adapters.streaming import StreamedReply, split_text
from bot.adapters.telegram.surface import MESSAGE_LIMIT, TelegramSurface, utf16_len
from bot.core.chat.conversation import MODEL_FAILED, STORE_DOWN_NOTICE, Conversation, ConversationPolicy
from bot.core.errors import StoreError
from bot.core.events import AnsweredBefore, Refusal, ReplyChunk, ReplyDone, ReplyEvent, UserMessage
from bot.store.sqlite.store import SqliteStore
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id
from tests.support.fakes import HashEmbedder, ScriptedInference, reply_done
from tests.support.telegram_api import FakeTelegramBotApi

TELEGRAM_CHAT = 4242
LONG = " ".join(f"sentence{n:04d}" for n in range(500))  # 6,499 characters


@dataclass
class Platform:
    """One surface as a person would see it, and how to make its platform refuse."""

    name: str
    surface: Surface
    layout: Layout
    link: Callable[[Conversation], LinkTo | None]
    seen: Callable[[], list[str]]  # the texts the person reads, in order
    posted: Callable[[], list[str]]  # the platform's ids of those messages
    refuse: Callable[[], None]  # the platform refuses every later send
    # Notices shown apart from the reply (a terminal's stderr, so that a pipe reads only replies).
    apart: Callable[[], list[str]] = list


@asynccontextmanager
async def telegram_platform(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Platform]:
    async with FakeTelegramBotApi() as api:
        bot = telegram.Bot(api.token, base_url=api.base_url)
        await bot.initialize()
        try:
            yield Platform(
                "telegram",
                TelegramSurface(bot, TELEGRAM_CHAT),
                Layout(limit=MESSAGE_LIMIT, measure=utf16_len, interval_s=0.0),
                lambda conversation: LinkTo(conversation, "telegram", str(TELEGRAM_CHAT), "ann"),
                lambda: api.texts(TELEGRAM_CHAT),
                lambda: [str(m.data["message_id"]) for m in api.bot_messages(TELEGRAM_CHAT)],
                lambda: api.block(TELEGRAM_CHAT),
            )
        finally:
            await bot.shutdown()


@asynccontextmanager
async def discord_platform(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Platform]:
    fake = FakeDiscord()
    await fake.start()
    fake.point_discord_py_here(monkeypatch)
    client = discord.Client(intents=discord.Intents.none())
    await client.login(p.TOKEN)  # REST only: the surface needs no gateway
    channel_id = dm_channel_id(ANN)
    said = p.snowflake()
    # ChannelSurface uses only what a partial message has: reply, channel, guild.
    message = cast(discord.Message, client.get_partial_messageable(channel_id).get_partial_message(said))
    surface = DiscordReply(ChannelSurface(message), Unlinked(), buttons=None, key=f"discord:{said}")

    def refuse() -> None:  # rate limited past discord.py's five tries
        fake.rest.throttle("POST", rf"/channels/{channel_id}/messages$", times=100, retry_after=0.01)

    try:
        yield Platform(
            "discord",
            surface,
            Layout(limit=discord_options.MESSAGE_LIMIT, interval_s=0.0),
            lambda conversation: LinkTo(conversation, "discord", f"discord:{channel_id}", "ann"),
            lambda: [shown.content for shown in fake.in_channel(channel_id)],
            lambda: [str(shown.id) for shown in fake.in_channel(channel_id)],
            refuse,
        )
    finally:
        await client.close()
        await fake.stop()


class Terminal(io.StringIO):
    refusing = False

    def write(self, text: str) -> int:
        if self.refusing:
            raise BrokenPipeError("the reader went away")
        return super().write(text)


@asynccontextmanager
async def console_platform(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Platform]:
    out = Terminal()

    def seen() -> list[str]:
        printed = out.getvalue()
        if not printed:
            return []
        assert printed.endswith("\n"), "a finished reply ends its line"
        return [printed.removesuffix("\n")]

    def refuse() -> None:
        out.refusing = True

    # A terminal's lines cannot be reacted to: nothing is linked, /react rates the last reply.
    errors: list[str] = []
    layout = replace(TERMINAL, notices=errors.append)
    yield Platform(
        "console", ConsoleSurface(out, ""), layout, lambda _: None, seen, lambda: [], refuse, lambda: errors
    )


PLATFORMS: dict[str, Callable[[pytest.MonkeyPatch], AbstractAsyncContextManager[Platform]]] = {
    "telegram": telegram_platform,
    "discord": discord_platform,
    "console": console_platform,
}


@pytest.fixture(params=list(PLATFORMS))
async def platform(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Platform]:
    async with PLATFORMS[request.param](monkeypatch) as made:
        yield made


@pytest.fixture
def conversation(store: SqliteStore) -> Conversation:
    return Conversation(store, HashEmbedder(), ScriptedInference(), ConversationPolicy(persona="p"))


async def stored_reply(conversation: Conversation, text: str) -> ReplyDone:
    """A ReplyDone for `text` whose turn really is stored, as the core would end a reply."""
    done = await reply_done(conversation, "hello", at=datetime.now(UTC))
    return ReplyDone(text, done.turn_id, done.memory_ids)


@dataclass
class Script:
    """The core's events for one reply, noting how many the delivery has taken."""

    events: list[ReplyEvent]
    raises: Exception | None = None
    taken: int = 0
    ended: bool = False

    async def __aiter__(self) -> AsyncIterator[ReplyEvent]:
        for event in self.events:
            self.taken += 1
            yield event
        if self.raises is not None:
            raise self.raises
        self.ended = True


def words(text: str) -> list[ReplyEvent]:
    return [ReplyChunk(word if n == 0 else " " + word) for n, word in enumerate(text.split(" "))]


async def run(platform: Platform, script: Script, conversation: Conversation) -> Delivered:
    return await deliver(script, platform.surface, platform.layout, link=platform.link(conversation))


async def links(conversation: Conversation, platform: Platform) -> list[int | None]:
    link = platform.link(conversation)
    if link is None:
        return []
    found = [
        await conversation.store.turns.find_message(link.platform, link.chat_id, i) for i in platform.posted()
    ]
    return [row.turn_id if row is not None else None for row in found]


async def test_streamed_words_end_as_the_exact_final_text(
    platform: Platform, conversation: Conversation
) -> None:
    text = "Hello there, it is lovely to hear from you."
    done = await stored_reply(conversation, text)
    script = Script([*words(text), done])
    delivered = await run(platform, script, conversation)
    assert platform.seen() == [text]
    assert delivered.done == done and delivered.not_shown is None and script.ended


async def test_a_long_reply_is_split_within_the_platform_limit(
    platform: Platform, conversation: Conversation
) -> None:
    done = await stored_reply(conversation, LONG)
    await run(platform, Script([*words(LONG), done]), conversation)
    assert platform.seen() == split_text(LONG, platform.layout.limit, platform.layout.measure)
    assert " ".join(platform.seen()) == LONG


async def test_every_message_of_a_stored_reply_is_linked_to_its_turn(
    platform: Platform, conversation: Conversation
) -> None:
    done = await stored_reply(conversation, LONG)
    delivered = await run(platform, Script([*words(LONG), done]), conversation)
    assert list(delivered.message_ids)[: len(platform.posted())] == platform.posted()
    assert await links(conversation, platform) == [done.turn_id] * len(platform.posted())


@pytest.mark.parametrize(
    ("ending", "raises", "notice"),
    [
        (Refusal(MODEL_FAILED.format(reason="timed out")), None, MODEL_FAILED.format(reason="timed out")),
        (None, StoreError("the disk is full"), SORRY),
    ],
    ids=["the model failed", "an error was raised"],
)
async def test_a_failure_mid_stream_keeps_the_words_and_adds_a_short_notice(
    platform: Platform,
    conversation: Conversation,
    ending: Refusal | None,
    raises: Exception | None,
    notice: str,
) -> None:
    events: list[ReplyEvent] = [*words("I was just about to say"), *([ending] if ending else [])]
    script = Script(events, raises=raises)
    delivered = await run(platform, script, conversation)
    assert platform.seen() == ["I was just about to say\n\n" + notice]
    assert delivered.done is None and script.taken == len(events)
    assert await links(conversation, platform) == [None] * len(platform.posted())


async def test_a_refusal_before_any_words_is_shown_alone(
    platform: Platform, conversation: Conversation
) -> None:
    await run(platform, Script([Refusal("I didn't get any text there.")]), conversation)
    assert platform.seen() == ["I didn't get any text there."]


async def test_the_store_down_notice_follows_the_reply(
    platform: Platform, conversation: Conversation
) -> None:
    text = "Answering from what I know."
    done = ReplyDone(text, None, (), notice=STORE_DOWN_NOTICE)
    delivered = await run(platform, Script([*words(text), done]), conversation)
    if platform.name == "console":  # on stderr, apart from the reply a pipe reads
        assert platform.seen() == [text] and platform.apart() == [STORE_DOWN_NOTICE]
    else:
        assert platform.seen() == [f"{text}\n\n{STORE_DOWN_NOTICE}"] and platform.apart() == []
    assert delivered.done == done
    assert await links(conversation, platform) == [None] * len(platform.posted()), "nothing to credit"


async def test_a_platform_refusing_to_show_still_consumes_every_event(
    platform: Platform, conversation: Conversation
) -> None:
    text = "You will not see this, but it is stored."
    done = await stored_reply(conversation, text)
    script = Script([*words(text), done])
    platform.refuse()
    delivered = await run(platform, script, conversation)
    assert script.ended and script.taken == len(script.events)
    assert delivered.not_shown is not None and delivered.done == done
    assert platform.seen() == []


class Blip:
    """A surface whose platform fails one edit mid-stream (a network blip), then works again, or
    is gone for good from that edit on. A plain object: the delivery only sees the Protocol."""

    def __init__(self, error: NotShown) -> None:
        self.messages: dict[str, str] = {}
        self.finished: list[tuple[list[str], bool]] = []
        self.error: NotShown | None = error
        self.gone = isinstance(error, Gone)

    async def send(self, text: str) -> str:
        self._fail_if_gone()
        self.messages[str(len(self.messages) + 1)] = text
        return str(len(self.messages))

    async def edit(self, message_id: str, text: str) -> None:
        self._fail_if_gone()
        if self.error is not None and not self.gone:
            error, self.error = self.error, None
            raise error
        if self.gone:
            raise Gone("blocked")
        self.messages[message_id] = text

    async def delete(self, message_id: str) -> None:
        self._fail_if_gone()
        del self.messages[message_id]

    async def finish(self, message_ids: Sequence[str], stored: bool) -> None:
        self._fail_if_gone()
        self.finished.append((list(message_ids), stored))

    def _fail_if_gone(self) -> None:
        if self.gone and len(self.messages) >= 1:
            raise Gone("blocked")


async def test_after_a_blip_mid_stream_the_finished_reply_still_shows(conversation: Conversation) -> None:
    text = "one two three four five six"
    done = await stored_reply(conversation, text)
    surface = Blip(NotShown("503 for a moment"))
    delivered = await deliver(Script([*words(text), done]), surface, Layout(limit=4096, interval_s=0.0))
    assert surface.messages == {"1": text}, "the final edit is tried once more, and shows"
    assert surface.finished == [(["1"], True)] and delivered.not_shown is None


async def test_once_the_person_is_gone_nothing_more_is_tried(conversation: Conversation) -> None:
    text = "one two three four five six"
    done = await stored_reply(conversation, text)
    surface = Blip(Gone("blocked"))
    script = Script([*words(text), done])
    delivered = await deliver(script, surface, Layout(limit=4096, interval_s=0.0))
    assert surface.messages == {"1": "one"} and surface.finished == []
    assert isinstance(delivered.not_shown, Gone) and script.ended, "still consumed, so still stored"


# -- whole sentences: a reply the token budget cut, through the real conversation ----------------
PLANNED = "Sure, happy to help. Let's start with the mornings."
RAMBLING = f"{PLANNED} If you're interested, I could even design a"


def writing(store: SqliteStore, reply: str, budget: int) -> Conversation:
    """The real conversation over the scripted model (one word a token), with `budget` tokens."""
    policy = ConversationPolicy(persona="p", max_new_tokens=budget)
    return Conversation(store, HashEmbedder(), ScriptedInference(reply), policy)


async def answer(platform: Platform, conversation: Conversation) -> Delivered:
    message = UserMessage("ann", "c1", "help me plan my week", datetime.now(UTC))
    events = conversation.handle_message(message)
    return await deliver(events, platform.surface, platform.layout, link=platform.link(conversation))


async def stored_text(store: SqliteStore, done: ReplyDone | None) -> str:
    assert done is not None
    return next(t.text for t in await store.turns.recent_turns("ann", "c1", 10) if t.id == done.turn_id)


@pytest.mark.parametrize(
    ("reply", "budget", "shown"),
    [
        (RAMBLING, len(RAMBLING.split(" ")), PLANNED),
        ("If you're interested I could even design a", 8, "If you're interested I could even design…"),
        ("Mix well. 我今天很高兴。 因为天气很好 所以", 4, "Mix well. 我今天很高兴。"),
        ("ok see you then and good luck", 96, "ok see you then and good luck"),
    ],
    ids=["cut mid-sentence", "nothing whole", "cut in Chinese", "ended by itself"],
)
async def test_a_cut_reply_shows_and_stores_only_its_whole_sentences(
    platform: Platform, store: SqliteStore, reply: str, budget: int, shown: str
) -> None:
    """On a terminal, what was printed cannot be taken back: its whole output is the reply shown."""
    delivered = await answer(platform, writing(store, reply, budget))
    assert platform.seen() == [shown]
    assert delivered.done is not None and delivered.done.cut is (budget < 96)
    assert await stored_text(store, delivered.done) == shown


async def test_a_terminal_prints_each_whole_sentence_as_it_ends(
    monkeypatch: pytest.MonkeyPatch, store: SqliteStore
) -> None:
    printed: list[str] = []
    async with console_platform(monkeypatch) as terminal:
        out = cast(ConsoleSurface, terminal.surface).out

        async def reply() -> AsyncIterator[ReplyEvent]:
            for event in words(RAMBLING):
                yield event
                printed.append(cast(io.StringIO, out).getvalue())
            yield ReplyDone(PLANNED, None, (), cut=True)

        await deliver(reply(), terminal.surface, terminal.layout)
        assert terminal.seen() == [PLANNED]
    assert "Sure, happy to help." in printed[5], "a sentence shows once the next word begins"
    assert not any("If" in step for step in printed), "the words after the last sentence wait"


@pytest.mark.parametrize("name", ["telegram", "discord"])
async def test_a_message_the_final_text_no_longer_needs_is_deleted(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The final text may need fewer messages than were shown (a split falls differently on the
    shorter text): the extra one goes, on the platform itself."""
    async with PLATFORMS[name](monkeypatch) as platform:
        reply = StreamedReply(platform.surface, limit=40, measure=platform.layout.measure, interval_s=0.0)
        await reply.add("The first sentence is here. The second one, longer, spills over. And")
        assert len(platform.seen()) == 2
        ids = await reply.finish("The first sentence is here.")
        assert platform.seen() == ["The first sentence is here."] and ids == platform.posted()


async def test_a_message_answered_before_shows_nothing(
    platform: Platform, conversation: Conversation
) -> None:
    """A platform's second delivery of a message the core answered already (core/chat/answered.py)."""
    delivered = await run(platform, Script([AnsweredBefore("telegram:1:2:reply")]), conversation)
    assert platform.seen() == [] and delivered == Delivered((), None, None)


@pytest.mark.parametrize("name", ["telegram", "discord"])
async def test_what_a_lead_showed_of_a_message_answered_before_is_taken_back(
    name: str, monkeypatch: pytest.MonkeyPatch, conversation: Conversation
) -> None:
    """A voice note's echo shows before the core finds the note answered already: it goes."""
    async with PLATFORMS[name](monkeypatch) as platform:
        script = Script([ReplyChunk("🎙 “hello there.”\n\n"), AnsweredBefore("telegram:1:2:reply")])
        await run(platform, script, conversation)
        assert platform.posted() == [], "shown, then deleted"
        assert script.ended
