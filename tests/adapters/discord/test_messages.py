"""DMs and server messages through discord.py's real client: who is answered, how the reply is
streamed and split, and what is refused politely with nothing stored."""

from __future__ import annotations

import itertools

from bot.core.chat.access import NOT_ALLOWED, Access
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, BEN, FakeDiscord, dm_channel_id, settled
from tests.support.fakes import SlowInference
from tests.support.waiting import wait_until

REPLY = "Nice to hear from you."


def texts(fake: FakeDiscord, message: p.Payload) -> list[str]:
    return [shown.content for shown in fake.replies_to(message)]


async def answered(fake: FakeDiscord, message: p.Payload, text: str = REPLY) -> None:
    await wait_until(lambda: texts(fake, message) == [text], what=f"the reply to {message['content']!r}")


async def test_a_dm_is_answered_stored_and_linked(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store)):
        message = await fake.dm(ANN, "hello there")
        await answered(fake, message)
    turns = await store.turns.recent_turns(f"discord:{ANN['id']}", f"discord:{dm_channel_id(ANN)}", 10)
    assert [(turn.role, turn.text) for turn in turns] == [("user", "hello there"), ("assistant", REPLY)]
    reply = fake.replies_to(message)[0]
    link = await store.turns.find_message("discord", f"discord:{dm_channel_id(ANN)}", str(reply.id))
    assert link is not None and link.turn_id == turns[-1].id
    assert reply.reference is None  # in a DM the reply simply follows


async def test_in_a_server_a_mention_is_answered_and_other_talk_is_ignored(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(services(store)):
        chatter = await fake.say_in_server(ANN, "just talking to friends")
        assert await settled(lambda: not fake.replies_to(chatter))
        mention = await fake.say_in_server(ANN, "what do you think?", mention=True)
        await answered(fake, mention)
    reply = fake.replies_to(mention)[0]
    assert reply.reference == mention["id"]  # shown as a reply to the person's message
    turns = await store.turns.recent_turns(f"discord:{ANN['id']}", f"discord:{p.GUILD_CHANNEL_ID}", 10)
    assert [turn.text for turn in turns] == ["what do you think?", REPLY]  # the @mention is not stored


async def test_a_reply_to_kindred_addresses_it(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store)):
        first = await fake.say_in_server(ANN, "hi", mention=True)
        await answered(fake, first)
        kindreds = fake.rest.payload(fake.replies_to(first)[0])
        follow_up = await fake.say_in_server(ANN, "tell me more", replying_to=kindreds)
        await answered(fake, follow_up)


async def test_messages_from_bots_are_never_answered(fake: FakeDiscord, store: SqliteStore) -> None:
    other_bot = p.user(6_000_000_000_000_000_001, "otherbot", bot=True)
    async with running(services(store)):
        message = await fake.say_in_server(other_bot, "hey kindred", mention=True)
        # Kindred's own messages come back on the gateway too (the fake echoes them like Discord).
        assert await settled(lambda: not fake.replies_to(message))
    assert (await store.stats()).turns == 0


async def test_a_long_reply_streams_with_paced_edits_and_splits_past_2000_characters(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    words = [f"word{index:04d}" for index in range(500)]  # 4,499 characters
    reply = " ".join(words)
    interval_s = 0.2
    served = services(store, inference=SlowInference(reply, delay_s=0.003))
    async with running(served, edit_interval_s=interval_s):
        message = await fake.dm(ANN, "tell me a long story")
        await wait_until(lambda: " ".join(texts(fake, message)) == reply, within_s=15, what="the full reply")
    shown = fake.replies_to(message)
    assert len(shown) == 3 and all(len(piece.content) <= 2000 for piece in shown)
    assert all(piece.content == piece.content.strip() for piece in shown)  # cut between words
    # Updates (an edit, maybe with a new piece posted at the same moment) come at most once per
    # interval; only the final one, with the exact text, may follow sooner.
    writes = sorted(
        call.at
        for call in fake.rest.calls
        if call.path.startswith(f"/api/v10/channels/{dm_channel_id(ANN)}/messages")
    )
    rounds = [at for index, at in enumerate(writes) if index == 0 or at - writes[index - 1] > 0.05]
    gaps = [later - earlier for earlier, later in itertools.pairwise(rounds)]
    assert len(rounds) >= 4, "the reply should have been shown while it was written"
    assert all(gap >= interval_s * 0.9 for gap in gaps[:-1]), gaps
    links = [
        await store.turns.find_message("discord", f"discord:{dm_channel_id(ANN)}", str(m.id)) for m in shown
    ]
    assert all(link is not None for link in links)  # a reaction on any piece counts


async def test_an_empty_message_is_refused_politely_and_nothing_is_stored(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(services(store)):
        message = await fake.dm(ANN, "   \n\t ")
        await wait_until(lambda: bool(texts(fake, message)), what="a refusal")
    assert texts(fake, message) == ["I didn't get any text there. Send me a few words and I'll answer."]
    assert (await store.stats()).turns == 0


async def test_a_10000_character_message_is_answered_or_refused_politely(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    huge = ("many words " * 1000)[:10_000]
    async with running(services(store)):
        message = await fake.dm(ANN, huge)
        await answered(fake, message)
    assert (await store.stats()).turns == 2

    strict = services(store, max_message_chars=4000)
    async with running(strict):
        message = await fake.dm(BEN, huge)
        await wait_until(lambda: bool(texts(fake, message)), what="a refusal")
    assert texts(fake, message)[0].startswith(
        "That message is 10,000 characters long; I can take up to 4,000."
    )
    assert (await store.stats()).turns == 2  # nothing more


async def test_someone_not_on_the_allowlist_is_refused_politely_and_nothing_is_stored(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    access = Access(allowed=frozenset({f"discord:{BEN['id']}", f"discord-guild:{p.GUILD_ID}"}))
    async with running(services(store, access=access)):
        stranger = await fake.dm(ANN, "let me in")
        await wait_until(lambda: texts(fake, stranger) == [NOT_ALLOWED], what="the refusal")
        friend = await fake.dm(BEN, "hello")
        await answered(fake, friend)
        in_the_server = await fake.say_in_server(ANN, "hi", mention=True)  # the server is allowed
        await answered(fake, in_the_server)
    stored_users = {turn.user_id for turn in await store.turns.recent_turns(f"discord:{ANN['id']}", "x", 5)}
    assert not stored_users
    assert await store.turns.recent_turns(f"discord:{ANN['id']}", f"discord:{dm_channel_id(ANN)}", 5) == []


async def test_writing_too_fast_gets_a_polite_wait(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store, per_minute=1, burst=1)):
        first = await fake.dm(ANN, "one")
        await answered(fake, first)
        second = await fake.dm(ANN, "two")
        await wait_until(lambda: bool(texts(fake, second)), what="the slow-down")
    assert texts(fake, second)[0].startswith("You're writing faster than I can think!")
    assert (await store.stats()).turns == 2
