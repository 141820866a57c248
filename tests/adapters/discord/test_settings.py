"""/settings on Discord, end to end: the real discord.py client against the loopback gateway and
REST, the real core and SQLite store. The answer is ephemeral, a select menu per setting; a choice
applies through the command that sets it and the message shows the settings anew; in a server the
channel's persona changes only for a member who may manage the server; the web link only in a DM."""

from __future__ import annotations

from dataclasses import replace

from bot.adapters.base import Services
from bot.core.memory.controls import TRAINING_OFF
from bot.core.personas import PersonaPicker
from bot.core.personas.picker import GROUP_ADMINS_ONLY
from bot.core.settings import SettingsLinks
from bot.core.settings.screen import WEB_NOT_HERE
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.adapters.discord.test_personas import Fixed
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id
from tests.support.discord_rest import Shown
from tests.support.waiting import wait_until

PERSON = f"discord:{ANN['id']}"
SUPPRESS_EMBEDS = 1 << 2
LINKS = SettingsLinks(b"k" * 32, "https://kindred.example")
MENUS = [
    "kindred:settings:persona",
    "kindred:settings:checkins",
    "kindred:settings:quiet",
    "kindred:settings:training",
]


def with_settings(store: SqliteStore) -> Services:
    served = services(store)
    picker = PersonaPicker(Fixed(), store.personas)
    served.conversation.personas = picker
    return replace(served, personas=picker, settings_links=LINKS)


async def shown(fake: FakeDiscord, token: str) -> Shown:
    await wait_until(lambda: any(s.content for s in fake.answers(token)), what="the answer")
    return next(s for s in fake.answers(token) if s.content)


async def changed(fake: FakeDiscord, message: Shown, versions: int) -> str:
    await wait_until(lambda: len(message.versions) > versions, what="the message shown anew")
    return message.content


async def test_a_menu_choice_applies_and_the_settings_show_anew(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(with_settings(store)):
        message = await shown(fake, await fake.slash(ANN, "settings"))
        first = message.content
        menus = message.custom_ids()
        await fake.choose(ANN, message, "kindred:settings:training", "off")
        training = await changed(fake, message, 1)
        await fake.choose(ANN, message, "kindred:settings:persona", "coach")
        persona = await changed(fake, message, 2)
        await fake.choose(ANN, message, "kindred:settings:checkins", "maybe")  # not one of its options
        refused = await changed(fake, message, 3)
    assert message.ephemeral and menus == MENUS
    assert first.startswith("Your settings\n• Persona: kindred (in this chat)")
    assert training.startswith(TRAINING_OFF) and "• Training with your replies: off (your choice)" in training
    assert persona.startswith("Done: I'm coach in this chat now.") and "Coach here." in persona
    assert "• Persona: coach (in this chat)" in persona
    assert refused.startswith("Check-ins can't be 'maybe'; it can be: on, off.")
    assert await store.learning.training_consent(PERSON) is False
    assert await store.personas.chosen(f"discord:{dm_channel_id(ANN)}") == "coach"
    assert not (await store.proactive.proactive_settings(PERSON)).enabled


async def test_in_a_server_only_a_member_who_may_manage_it_changes_the_persona(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    fake.member_permissions[ANN["id"]] = "0"
    async with running(with_settings(store)):
        message = await shown(fake, await fake.slash(ANN, "settings", where="server"))
        await fake.choose(ANN, message, "kindred:settings:persona", "coach", where="server")
        refused = await changed(fake, message, 1)
        fake.member_permissions.clear()
        await fake.choose(ANN, message, "kindred:settings:persona", "coach", where="server")
        switched = await changed(fake, message, 2)
        web = await shown(fake, await fake.slash(ANN, "settings", where="server", link="web"))
    assert message.ephemeral and message.custom_ids() == MENUS  # the person alone reads it
    assert "• Persona: kindred (in this group, set by its admins)" in message.versions[0][1]
    assert refused.startswith(GROUP_ADMINS_ONLY)
    assert switched.startswith("Done: I'm coach in this chat now.")
    assert web.content == WEB_NOT_HERE


async def test_the_web_link_names_the_person_and_their_dm(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(with_settings(store)):
        said = await shown(fake, await fake.slash(ANN, "settings", link="web"))
    url = said.content.splitlines()[-1]
    claim = LINKS.read(url.removeprefix("https://kindred.example/s/"))
    assert said.ephemeral and not isinstance(claim, str)
    assert said.flags & SUPPRESS_EMBEDS  # no crawler reads the page to draw an embed
    assert (claim.person, claim.chat) == (PERSON, f"discord:{dm_channel_id(ANN)}")
