"""Proactive messages on Discord: the beat sends through discord.py's real HTTP client (no
gateway) to the loopback REST server, into the person's DM channel; a person who blocked the bot
(Discord's 50007) is marked inactive and gets nothing more; the "don't suggest this again" button
under a sent message, pressed through the gateway client."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.adapters.discord.messenger import NEVER_AGAIN_ID, DiscordMessenger
from bot.core.models import NewTurn
from bot.core.proactive.beat import ProactiveBeat
from bot.core.proactive.models import NewReminder
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support import discord_payloads as p
from tests.support import proactive
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id
from tests.support.fakes import HashEmbedder
from tests.support.waiting import wait_until

NOW = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
PERSON = f"discord:{ANN['id']}"


async def remind(store: SqliteStore, text: str) -> None:
    await store.proactive.add_reminder(NewReminder(PERSON, PERSON, text, NOW, "Europe/Berlin", NOW))


async def test_a_reminder_arrives_in_the_dm_channel_and_is_linked_to_its_turn(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    await remind(store, "call the dentist")
    messenger = DiscordMessenger(p.TOKEN)
    try:
        report = await ProactiveBeat(store, {"discord": messenger}, HashEmbedder).run(NOW)
    finally:
        await messenger.close()
    assert report.sent == 1
    [shown] = fake.in_channel(dm_channel_id(ANN))
    assert shown.content.startswith("Reminder: call the dentist")
    chat = f"discord:{dm_channel_id(ANN)}"
    link = await store.turns.find_message("discord", chat, str(shown.id))
    [row] = await store.proactive.sent_messages(PERSON, NOW - timedelta(days=1))
    assert link is not None and link.turn_id == row.turn_id and row.chat_id == chat


async def test_a_person_who_blocked_the_bot_is_marked_inactive(fake: FakeDiscord, store: SqliteStore) -> None:
    embedder = HashEmbedder()
    hello = NewTurn(
        PERSON, PERSON, "user", "hi", embedder.vector("hi"), embedder.model_name, NOW - timedelta(days=1)
    )
    await store.turns.add_turn(hello)
    assert await store.turns.is_user_active(PERSON)
    await remind(store, "stretch")
    fake.rest.blocked.add(int(ANN["id"]))
    messenger = DiscordMessenger(p.TOKEN)
    beat = ProactiveBeat(store, {"discord": messenger}, HashEmbedder)
    try:
        report = await beat.run(NOW)
        await remind(store, "stretch again")
        later = await beat.run(NOW + timedelta(minutes=5))
    finally:
        await messenger.close()
    assert (report.unreachable, report.sent) == (1, 0) and later.people == 0
    assert not await store.turns.is_user_active(PERSON)
    assert fake.in_channel(dm_channel_id(ANN)) == []


async def test_the_dont_suggest_again_button_turns_that_kind_off(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    now = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
    await proactive.working_for_hours(store, PERSON, 3.5, now)
    await proactive.opt_in(store, PERSON, now, timezone="UTC")
    messenger = DiscordMessenger(p.TOKEN)
    try:
        assert (await ProactiveBeat(store, {"discord": messenger}, HashEmbedder).run(now)).sent == 1
    finally:
        await messenger.close()
    [shown] = fake.in_channel(dm_channel_id(ANN))
    assert shown.custom_ids() == [NEVER_AGAIN_ID]
    async with running(services(store)):
        token = await fake.press(ANN, shown, NEVER_AGAIN_ID)
        await wait_until(lambda: bool(fake.answers(token)) and fake.answers(token)[0].content != "")
    assert fake.answers(token)[0].content.startswith("Okay, no more break suggestions.")
    assert (await store.proactive.proactive_settings(PERSON)).disabled == {"long_session"}
    [row] = await store.proactive.sent_messages(PERSON, now - timedelta(days=1))
    assert row.outcome == "dismissed"
