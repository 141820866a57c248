"""/confirm and /correct through discord.py's real command tree: ephemeral answers, what /memories
shows afterwards, bad ids, someone else's memory, and open to people the allowlist keeps out."""

from __future__ import annotations

from bot.core.chat.access import Access
from bot.core.memory.controls import MAX_CORRECTION_CHARS
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.adapters.discord.test_slash_commands import one_answer, remember
from tests.support.discord_fake import ANN, BEN, FakeDiscord

ANN_KEY = f"discord:{ANN['id']}"
NO_MEMORY = "I have no memory #{} of yours. /memories lists them."


async def answer(fake: FakeDiscord, person: dict[str, object], name: str, **options: str) -> str:
    shown = await one_answer(fake, await fake.slash(person, name, **options))
    assert shown.ephemeral, f"/{name} answered in public"
    return shown.content


async def test_confirm_then_memories_shows_it_confirmed(fake: FakeDiscord, store: SqliteStore) -> None:
    ids = await remember(store, 2)
    async with running(services(store)):
        confirmed = await answer(fake, ANN, "confirm", memory=f"#{ids[0]}")
        listing = await answer(fake, ANN, "memories")
    assert confirmed == f"Thanks, memory #{ids[0]} is confirmed. I'll rely on it."
    assert f"#{ids[0]} · turn · just now · [confirmed] fact number 0" in listing
    assert f"#{ids[1]} · turn · just now · fact number 1" in listing


async def test_correct_replaces_the_memory(fake: FakeDiscord, store: SqliteStore) -> None:
    ids = await remember(store, 2)
    async with running(services(store)):
        corrected = await answer(fake, ANN, "correct", memory=str(ids[1]), text="  my cat is  called Miso ")
        listing = await answer(fake, ANN, "memories")
    new_id = max(memory.id for memory in await store.memories.list_memories(ANN_KEY, 10))
    assert (
        corrected
        == f"Corrected: #{new_id} now says “my cat is called Miso”, and #{ids[1]} will not come up again."
    )
    assert f"#{new_id} · turn · just now · [confirmed] my cat is called Miso" in listing
    assert f"#{ids[1]} · turn · just now · [replaced by #{new_id}] fact number 1" in listing


async def test_bad_ids_and_text_get_a_clear_answer(fake: FakeDiscord, store: SqliteStore) -> None:
    ids = await remember(store, 1)
    async with running(services(store)):
        for memory in ("", "  ", "abc", "²", "١٢", f"{ids[0]} 6", "1; DROP TABLE x"):
            assert "/confirm ID" in await answer(fake, ANN, "confirm", memory=memory)
            assert "/correct ID new text" in await answer(fake, ANN, "correct", memory=memory, text="new")
        assert await answer(fake, ANN, "confirm", memory="99999") == NO_MEMORY.format(99999)
        assert await answer(fake, ANN, "correct", memory="99999", text="new") == NO_MEMORY.format(99999)
        assert "/correct ID new text" in await answer(fake, ANN, "correct", memory=str(ids[0]), text=" ")
        huge = await answer(fake, ANN, "correct", memory=str(ids[0]), text="x" * (MAX_CORRECTION_CHARS + 1))
    assert huge == f"Please keep a correction under {MAX_CORRECTION_CHARS} characters."
    (memory,) = await store.memories.list_memories(ANN_KEY, 10)
    assert (memory.text, memory.status, memory.verification) == ("fact number 0", "active", 0.0)


async def test_nobody_can_revise_another_persons_memory(fake: FakeDiscord, store: SqliteStore) -> None:
    ids = await remember(store, 1)
    async with running(services(store)):
        confirm = await answer(fake, BEN, "confirm", memory=str(ids[0]))
        correct = await answer(fake, BEN, "correct", memory=str(ids[0]), text="Ben was here")
    assert confirm == correct == NO_MEMORY.format(ids[0])
    (memory,) = await store.memories.list_memories(ANN_KEY, 10)
    assert (memory.text, memory.status, memory.verification) == ("fact number 0", "active", 0.0)


async def test_memory_controls_stay_open_to_people_the_allowlist_keeps_out(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    ids = await remember(store, 2)
    async with running(services(store, access=Access(allowed=frozenset({"discord:1"})))):
        confirmed = await answer(fake, ANN, "confirm", memory=str(ids[0]), where="server")
        corrected = await answer(fake, ANN, "correct", memory=str(ids[1]), text="new", where="server")
    assert confirmed.startswith("Thanks") and corrected.startswith("Corrected")
