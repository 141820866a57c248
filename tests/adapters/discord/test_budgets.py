"""Budgets on Discord, through discord.py's real client: a DM runs out and is told when it
renews; a server the allowlist names makes its people members, while the same person in a DM,
let in as a guest, has the guests' budget."""

from __future__ import annotations

from bot.core.chat.access import Access
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord
from tests.support.waiting import wait_until

REPLY = "Nice to hear from you."
RUNS_OUT = "You've used your allowance for today"
KEPT = "Your message is kept."


def texts(fake: FakeDiscord, message: p.Payload) -> list[str]:
    return [shown.content for shown in fake.replies_to(message)]


async def answer(fake: FakeDiscord, message: p.Payload) -> str:
    """The one finished answer to `message`: the reply streams in edits ("Nice", then the rest), so
    the first text shown may be part of it."""

    def finished() -> bool:
        shown = texts(fake, message)
        return len(shown) == 1 and (shown[0] == REPLY or shown[0].endswith(KEPT))

    await wait_until(finished, what=f"the finished answer to {message['content']!r}")
    return texts(fake, message)[0]


async def test_a_dm_runs_out_of_its_budget(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store, budgets="[everyone]\ntokens_per_day = 10\n")):
        assert await answer(fake, await fake.dm(ANN, "hello there, how are you?")) == REPLY
        refused = await answer(fake, await fake.dm(ANN, "and again?"))
    assert refused.startswith(f"{RUNS_OUT} (10 tokens). It renews at midnight, UTC")
    assert refused.endswith(KEPT)


async def test_a_server_on_the_allowlist_makes_members_and_a_dm_a_guest(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    access = Access(frozenset({f"discord-guild:{p.GUILD_ID}"}), guests=True)
    budgets = "[everyone]\ntokens_per_day = 100000\n[guests]\ntokens_per_day = 1\n"
    async with running(services(store, access=access, budgets=budgets)):
        assert await answer(fake, await fake.dm(ANN, "hello in private")) == REPLY
        refused = await answer(fake, await fake.dm(ANN, "again in private"))
        # Her use is hers wherever she is; in the server she has everyone's budget.
        for text in ("what do you think?", "and now?"):
            assert await answer(fake, await fake.say_in_server(ANN, text, mention=True)) == REPLY
    assert refused.startswith(f"{RUNS_OUT} (1 token)"), "a guest in a DM: the guests' budget"
