"""/model on Discord, end to end: the real discord.py client against the loopback gateway and
REST, the real conversation and SQLite store. Alone it lists the models the person may use; with
a name it switches and the next reply comes from that model; an unknown name answers with the
list; a model the person may not use is refused; in a server a member without Manage Server is
refused."""

from __future__ import annotations

from dataclasses import replace

from bot.adapters.base import Services
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support.chat_models import model_picker
from tests.support.discord_fake import ANN, FakeDiscord
from tests.support.fakes import ScriptedInference
from tests.support.waiting import wait_until


async def answer(fake: FakeDiscord, token: str) -> str:
    await wait_until(lambda: any(shown.content for shown in fake.answers(token)), what="the answer")
    return next(shown.content for shown in fake.answers(token) if shown.content)


def with_models(store: SqliteStore) -> Services:
    configured = ScriptedInference("small here.")
    served = services(store, inference=configured)
    picker = model_picker(store, configured)
    served.conversation.models = picker
    return replace(served, models=picker)


async def test_model_lists_switches_and_the_next_reply_comes_from_it(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(with_models(store)):
        listed = await answer(fake, await fake.slash(ANN, "model"))
        unknown = await answer(fake, await fake.slash(ANN, "model", use="pirate"))
        refused = await answer(fake, await fake.slash(ANN, "model", use="boss"))
        before = await answer(fake, await fake.slash(ANN, "chat", message="hello"))
        switched = await answer(fake, await fake.slash(ANN, "model", use="secret"))
        after = await answer(fake, await fake.slash(ANN, "chat", message="hello again"))
    assert (
        listed == "I answer with small in this chat.\n\nModels you may use: small (now), big, secret. "
        "/model NAME picks one."
    )
    assert unknown.startswith("I have no model called 'pirate'.")
    assert refused.startswith("You may not use boss; ask my admin.")
    assert switched.startswith("Done: I answer with secret in this chat now.")
    assert (before, after) == ("small here.", "secret here.")
    assert await store.models.chosen_by(f"discord:{ANN['id']}") != []


async def test_in_a_server_a_member_who_may_not_manage_it_is_refused(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    fake.member_permissions[ANN["id"]] = "0"
    async with running(with_models(store)):
        refused = await answer(fake, await fake.slash(ANN, "model", where="server", use="big"))
        fake.member_permissions.clear()
        switched = await answer(fake, await fake.slash(ANN, "model", where="server", use="big"))
    assert refused == "Only this group's admins can change my model here."
    assert switched.startswith("Done: I answer with big in this chat now.")


async def test_typing_a_name_offers_only_the_models_the_person_may_use(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    """Ann (on `secret`'s list, not an admin) is offered `secret` and never `boss`."""
    async with running(with_models(store)):
        everything = await fake.autocomplete(ANN, "model", "use", "")
        some = await fake.autocomplete(ANN, "model", "use", "S")
    assert [choice["value"] for choice in everything] == ["small", "big", "secret"]
    assert [choice["value"] for choice in some] == ["small", "secret"]
