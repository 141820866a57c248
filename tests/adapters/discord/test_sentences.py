"""Whole sentences through discord.py's real client and the loopback gateway and REST: a reply the
token budget cuts streams its tail, and the final edit (and the stored turn) ends at its last whole
sentence, also when the tail had run past Discord's 2,000 characters."""

from __future__ import annotations

from bot.adapters.discord.options import MESSAGE_LIMIT
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id
from tests.support.fakes import SlowInference
from tests.support.waiting import wait_until

WHOLE = "Sure, happy to help with that. Let's start with the mornings."
TAIL = "If you're interested, I could even design a whole plan for the"


def texts(fake: FakeDiscord, message: p.Payload) -> list[str]:
    return [shown.content for shown in fake.replies_to(message)]


async def stored_reply(store: SqliteStore) -> str:
    turns = await store.turns.recent_turns(f"discord:{ANN['id']}", f"discord:{dm_channel_id(ANN)}", 10)
    return turns[-1].text


async def test_a_cut_dm_reply_streams_its_tail_and_ends_at_its_last_sentence(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    reply = f"{WHOLE} {TAIL}"
    served = services(store, inference=SlowInference(reply, 0.02), max_new_tokens=len(reply.split(" ")))
    async with running(served):
        message = await fake.dm(ANN, "help me plan my week")
        await wait_until(lambda: texts(fake, message) == [WHOLE], what="the reply, trimmed")
    versions = [text for _, text in fake.replies_to(message)[0].versions]
    assert any(version.startswith(f"{WHOLE} If") for version in versions), "the tail streamed"
    assert await stored_reply(store) == WHOLE


async def test_a_tail_past_2000_characters_leaves_no_message_behind(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    # Long words, one a sentence: few tokens, so that the tail streams for long enough to be shown.
    sentences = " ".join(f"Sentence-number-{n:04d}-is-here-and-it-is-long." for n in range(44))  # 1,979
    reply = sentences + " And-then" + " there-is-more-and-more" * 12
    assert len(sentences) <= MESSAGE_LIMIT < len(reply), "only the tail needs a second message"
    served = services(store, inference=SlowInference(reply, 0.01), max_new_tokens=len(reply.split(" ")))
    async with running(served):
        message = await fake.dm(ANN, "write me something long")
        await wait_until(lambda: texts(fake, message) == [sentences], 60, what="the whole sentences")
    assert not any("there-is" in shown.content for shown in fake.rest.deleted), "never posted alone"
    assert await stored_reply(store) == sentences
