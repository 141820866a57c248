"""Reactions on Kindred's replies, through MESSAGE_REACTION_ADD/REMOVE dispatches, become one
feedback record per (turn, person, source); reactions anywhere else change nothing."""

from __future__ import annotations

from collections.abc import Callable

from bot.core.chat.access import Access
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, BEN, FakeDiscord, settled
from tests.support.discord_rest import Shown
from tests.support.fakes import SlowInference
from tests.support.waiting import wait_until

Feedback = Callable[[], list[tuple[str, str, str, float]]]
ANN_ID = f"discord:{ANN['id']}"


async def a_reply(fake: FakeDiscord, *, in_server: bool = False) -> tuple[p.Payload, Shown]:
    if in_server:
        message = await fake.say_in_server(ANN, "how are you?", mention=True)
    else:
        message = await fake.dm(ANN, "how are you?")
    await wait_until(lambda: [m.content for m in fake.replies_to(message)] == ["Nice to hear from you."])
    return message, fake.replies_to(message)[0]


async def test_a_reaction_is_recorded_changed_and_removed(
    fake: FakeDiscord, store: SqliteStore, feedback: Feedback
) -> None:
    async with running(services(store)):
        _, reply = await a_reply(fake)
        await fake.react(ANN, reply, "👍")
        await wait_until(lambda: feedback() == [(ANN_ID, "reaction", "👍", 1.0)], what="👍 recorded")
        # A changed reaction arrives as the new one added and the old one removed, in either order.
        await fake.react(ANN, reply, "👎")
        await wait_until(lambda: feedback() == [(ANN_ID, "reaction", "👎", -1.0)], what="👎 replacing 👍")
        await fake.react(ANN, reply, "👍", added=False)
        await wait_until(lambda: feedback() == [], what="the removal")
        await fake.react(ANN, reply, "❤️")
        await wait_until(lambda: feedback() == [(ANN_ID, "reaction", "❤️", 1.0)], what="❤️ recorded")


async def test_reactions_in_a_server_count_per_person(
    fake: FakeDiscord, store: SqliteStore, feedback: Feedback
) -> None:
    async with running(services(store)):
        _, reply = await a_reply(fake, in_server=True)
        await fake.react(ANN, reply, "🔥")
        await wait_until(lambda: len(feedback()) == 1)  # one at a time: see test_concurrency.py
        await fake.react(BEN, reply, "💩")
        expected = [(ANN_ID, "reaction", "🔥", 1.0), (f"discord:{BEN['id']}", "reaction", "💩", -1.0)]
        await wait_until(lambda: sorted(feedback()) == sorted(expected), what="both reactions")


async def test_reactions_that_are_not_feedback_change_nothing(
    fake: FakeDiscord, store: SqliteStore, feedback: Feedback
) -> None:
    async with running(services(store)):
        message, reply = await a_reply(fake, in_server=True)
        await fake.react(BEN, message, "👍")  # on a person's message, not a Kindred reply
        await fake.react(p.BOT_USER, reply, "👍")  # Kindred's own reaction
        await fake.react(ANN, reply, "🦆")  # an emoji with no meaning
        assert await settled(lambda: feedback() == [])


async def test_reactions_from_someone_not_allowed_are_ignored(
    fake: FakeDiscord, store: SqliteStore, feedback: Feedback
) -> None:
    access = Access(allowed=frozenset({f"discord:{ANN['id']}"}))
    async with running(services(store, access=access)):
        _, reply = await a_reply(fake, in_server=True)
        await fake.react(BEN, reply, "👍")
        assert await settled(lambda: feedback() == [])
        await fake.react(ANN, reply, "👍")
        await wait_until(lambda: feedback() == [(ANN_ID, "reaction", "👍", 1.0)])


async def test_a_reaction_on_a_reply_still_being_written_counts_once_it_is_stored(
    fake: FakeDiscord, store: SqliteStore, feedback: Feedback
) -> None:
    reply = " ".join(["thinking"] * 40)
    async with running(services(store, inference=SlowInference(reply, 0.01))):
        message = await fake.dm(ANN, "take your time")
        # Once it has been edited, the client surely knows the message it posted.
        await wait_until(lambda: len(fake.replies_to(message)) == 1, what="the reply to begin")
        first = fake.replies_to(message)[0]
        await wait_until(lambda: len(first.versions) >= 2, what="the first edit")
        assert first.content != reply  # still being written
        await fake.react(ANN, first, "👍")
        await wait_until(lambda: feedback() == [(ANN_ID, "reaction", "👍", 1.0)], what="👍 recorded")
    assert first.content == reply
