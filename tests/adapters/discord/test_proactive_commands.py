"""/proactive and /reminders as Discord slash commands, and "remind me …" in a DM, through
discord.py's real command tree and gateway on the loopback server."""

from __future__ import annotations

from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id
from tests.support.waiting import wait_until

PERSON = f"discord:{ANN['id']}"


async def answer(fake: FakeDiscord, token: str) -> str:
    await wait_until(
        lambda: bool(fake.answers(token)) and fake.answers(token)[0].content != "", what="an answer"
    )
    return fake.answers(token)[0].content


async def test_proactive_settings_and_a_reminder_by_dm(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store)):
        assert (await answer(fake, await fake.slash(ANN, "proactive"))).startswith("Check-ins: off")
        on = await answer(fake, await fake.slash(ANN, "proactive", setting="on"))
        assert on.startswith("Done: check-ins are on.")
        zone = await answer(fake, await fake.slash(ANN, "proactive", setting="timezone America/New_York"))
        assert zone.startswith("Done: your time zone is America/New_York")
        await fake.dm(ANN, "remind me tomorrow at 8am to buy bread")
        channel = dm_channel_id(ANN)
        await wait_until(lambda: bool(fake.in_channel(channel)), what="the confirmation")
        await wait_until(lambda: "I'll remind you" in fake.in_channel(channel)[-1].content, what="its end")
        assert "at 08:00 (America/New_York)" in fake.in_channel(channel)[-1].content
        listing = await answer(fake, await fake.slash(ANN, "reminders"))
        assert "buy bread" in listing and "(America/New_York)" in listing
    settings = await store.proactive.proactive_settings(PERSON)
    assert settings.enabled and settings.timezone == "America/New_York"
    [reminder] = await store.proactive.reminders(PERSON)
    assert reminder.text == "buy bread"
