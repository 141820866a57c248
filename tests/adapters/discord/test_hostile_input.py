"""Hostile input through Discord: thousands of texts and reaction payloads through the adapter's
pure parts and discord.py's own parsing (hypothesis), then the worst of them as real DMs and
reactions through discord.py's client and the loopback gateway: each DM is answered or refused
in words, what was accepted is stored, a reaction on a message Kindred never sent changes
nothing, and the bot keeps answering afterwards."""

from __future__ import annotations

import re
from collections.abc import Callable

import discord
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.adapters.discord.policy import without_mention
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id
from tests.support.hostile import BIDI, HUGE_CHARS, INVISIBLE, hostile_texts, json_values
from tests.support.waiting import wait_until

Feedback = Callable[[], list[tuple[str, str, str, float]]]
REPLY = "Nice to hear from you."


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(text=hostile_texts, my_id=st.integers(0, 2**64), mentioned=st.booleans())
def test_the_mention_comes_out_of_any_text(text: str, my_id: int, mentioned: bool) -> None:
    said = f"<@{my_id}> {text} <@!{my_id}>" if mentioned else text
    left = without_mention(said, my_id)
    assert not re.search(rf"<@!?{my_id}>", left)
    assert left == left.strip()


emoji_payloads = st.fixed_dictionaries(
    {"name": st.one_of(hostile_texts, st.none()), "id": st.one_of(st.none(), st.integers(0, 2**64).map(str))},
    optional={"animated": st.booleans(), "junk": json_values},
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(emoji=emoji_payloads, removed=st.booleans())
def test_any_reaction_emoji_reads_as_text(emoji: dict[str, object], removed: bool) -> None:
    """What discord.py's state does with MESSAGE_REACTION_ADD/REMOVE, then what reaction_event reads."""
    data = p.reaction(1, 2, 3, "x") | {"emoji": emoji}
    partial = discord.PartialEmoji.from_dict(emoji)
    kind = "REACTION_REMOVE" if removed else "REACTION_ADD"
    raw = discord.RawReactionActionEvent(data, partial, kind)  # type: ignore[arg-type]
    assert isinstance(str(raw.emoji), str) and raw.message_id == 3


HOSTILE_DMS = [
    "\x00\x00 NUL before words \x00",
    INVISIBLE * 3,  # nothing readable: refused in words
    f"{BIDI} שלום and مرحبا mixed \u202e reversed",
    "word " * (HUGE_CHARS // 5),  # past the message limit: refused in words
    "/forget ²",
    "\ud83d lone surrogate half \udfff",
    "zero\u200bwidth\u200djoined words",
]


async def test_hostile_dms_and_stray_reactions_get_words_and_lose_nothing(
    fake: FakeDiscord, store: SqliteStore, feedback: Feedback
) -> None:
    async with running(services(store, max_message_chars=4096)):
        sent = [await fake.dm(ANN, text) for text in HOSTILE_DMS]
        await wait_until(lambda: all(fake.replies_to(message) for message in sent), what="an answer to each")
        stray = await fake.dm(ANN, "one more")  # a person's own message, never Kindred's
        for emoji in ("👍", "\x00", INVISIBLE, "<:custom:123>", "👍" * 50):
            await fake.react(ANN, stray, emoji)
        last = await fake.dm(ANN, "still there?")
        await wait_until(
            lambda: REPLY in [m.content for m in fake.replies_to(last)], what="the bot still answering"
        )
    assert feedback() == []
    turns = await store.turns.recent_turns(f"discord:{ANN['id']}", f"discord:{dm_channel_id(ANN)}", 100)
    said = [turn.text for turn in turns if turn.role == "user"]
    assert "NUL before words" in said[0] and "\x00" not in said[0]
    assert len(said) == len(HOSTILE_DMS) - 2 + 2  # two refused, then "one more" and "still there?"
