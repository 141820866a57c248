"""/persona on Discord, end to end: the real discord.py client against the loopback gateway and
REST, the real conversation and SQLite store. Alone it lists; with a name it switches and greets;
an unknown name answers with the list; in a server a member without Manage Server is refused."""

from __future__ import annotations

from dataclasses import replace

from bot.core.personas import PersonaBook, PersonaPicker, parse_personas
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support.discord_fake import ANN, FakeDiscord
from tests.support.waiting import wait_until

BOOK = parse_personas(
    '[[persona]]\nname = "kindred"\nprompt = "You are Kindred."\n'
    '[[persona]]\nname = "coach"\nprompt = "You are a coach."\ngreeting = "Coach here."\n'
)


class Fixed:
    def book(self) -> PersonaBook:
        return BOOK


async def answer(fake: FakeDiscord, token: str) -> str:
    await wait_until(lambda: any(shown.content for shown in fake.answers(token)), what="the answer")
    return next(shown.content for shown in fake.answers(token) if shown.content)


def with_personas(store: SqliteStore):  # type: ignore[no-untyped-def]
    served = services(store)
    picker = PersonaPicker(Fixed(), store.personas)
    served.conversation.personas = picker
    return replace(served, personas=picker)


async def test_persona_lists_switches_and_answers_an_unknown_name(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(with_personas(store)):
        listed = await answer(fake, await fake.slash(ANN, "persona"))
        unknown = await answer(fake, await fake.slash(ANN, "persona", who="pirate"))
        switched = await answer(fake, await fake.slash(ANN, "persona", who="coach"))
    assert "I'm kindred in this chat." in listed and "Personas: kindred (now), coach." in listed
    assert unknown.startswith("I have no persona called 'pirate'.")
    assert switched.endswith("Coach here.")
    assert await store.personas.chosen_by(f"discord:{ANN['id']}") != []


async def test_in_a_server_a_member_who_may_not_manage_it_is_refused(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    fake.member_permissions[ANN["id"]] = "0"
    async with running(with_personas(store)):
        refused = await answer(fake, await fake.slash(ANN, "persona", where="server", who="coach"))
        fake.member_permissions.clear()
        switched = await answer(fake, await fake.slash(ANN, "persona", where="server", who="coach"))
    assert refused == "Only this group's admins can change my persona here."
    assert switched.endswith("Coach here.")
