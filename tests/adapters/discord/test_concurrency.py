"""discord.py runs every gateway event as a task of its own, so people are answered at the same
time, and a RESUME replays several messages at once. The core and the store must take concurrent
calls without losing any of them (this found the SQLite connection and outbox races)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import FakeDiscord
from tests.support.waiting import wait_until

PEOPLE = [p.user(7_000_000_000_000_000_000 + n, f"person{n}") for n in range(6)]


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


async def test_people_writing_at_the_same_moment_are_all_answered_and_stored(
    fake: FakeDiscord, store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(services(store)):
        messages = [await fake.dm(person, f"hello, I am number {n}") for n, person in enumerate(PEOPLE)]
        await wait_until(
            lambda: all(len(fake.replies_to(m)) == 1 for m in messages), within_s=3, what="every reply"
        )
    assert (await store.stats()).turns == 2 * len(PEOPLE)
    for message in messages:
        reply = fake.replies_to(message)[0]
        assert (
            await store.turns.find_message("discord", f"discord:{reply.channel_id}", str(reply.id))
            is not None
        )
    assert errors(caplog) == []


async def test_reactions_at_the_same_moment_are_all_recorded(
    fake: FakeDiscord,
    store: SqliteStore,
    feedback: Callable[[], list[tuple[str, str, str, float]]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running(services(store)):
        message = await fake.say_in_server(PEOPLE[0], "hi", mention=True)
        await wait_until(lambda: len(fake.replies_to(message)) == 1)
        reply = fake.replies_to(message)[0]
        chat_id = f"discord:{reply.channel_id}"

        async def linked() -> bool:
            return await store.turns.find_message("discord", chat_id, str(reply.id)) is not None

        await wait_until(linked, what="the reply to be stored and linked")
        for person in PEOPLE:
            await fake.react(person, reply, "👍")
        await wait_until(lambda: len(feedback()) == len(PEOPLE), within_s=3, what="every reaction")
    assert errors(caplog) == []
