"""Delivery unknown on Discord, end to end: the real adapter and discord.py against Discord on
loopback, which keeps a reply and then answers 500 or hangs past the client's timeout, or never
carries the create out and answers only after that timeout (a reply that never arrived, which to
Kindred looks the same as the hang).

A maybe-delivered reply shows at most once, is stored as of unknown delivery, is confirmed by a
reaction or a reply on the message id the bot never learned, and otherwise is told once at the
person's next message in that channel, with a button that sends it again once, for that person."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.core.chat.doubts import NOTHING_TO_SEND, SENT_AGAIN
from bot.core.models import DeliveryDoubt
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.adapters.discord.test_maybe_delivered import CREATE, REPLY, Feedback, creates
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, BEN, FakeDiscord, dm_channel_id, settled
from tests.support.discord_rest import Shown
from tests.support.waiting import wait_until

ANN_DM = dm_channel_id(ANN)
# The notice quotes the reply it means.
NOTICE = f"My last reply may not have reached you: “{REPLY}”"
# Past the client's patience (request_timeout_s below): the create may have been delivered.
HANG_S, PATIENCE_S = 2.0, 0.5


async def doubts(store: SqliteStore, channel_id: int) -> list[DeliveryDoubt]:
    return await store.deliveries.waiting("discord", f"discord:{channel_id}")


async def until_doubtful(store: SqliteStore, channel_id: int) -> DeliveryDoubt:
    await wait_until(lambda: doubts(store, channel_id), what="a reply of unknown delivery recorded")
    return (await doubts(store, channel_id))[-1]


@contextlib.asynccontextmanager
async def first_reply_in_doubt(
    fake: FakeDiscord, store: SqliteStore, *, lost: bool, in_server: bool
) -> AsyncIterator[DeliveryDoubt]:
    """Kindred running, and the person's first message answered by a create that Discord kept and
    then hung on, or (`lost`) never carried out: a reply of unknown delivery either way."""
    if lost:
        fake.rest.lose("POST", CREATE, hang_s=HANG_S)
    else:
        fake.rest.fail_after_delivery("POST", CREATE, hang_s=HANG_S)
    async with running(services(store), request_timeout_s=PATIENCE_S):
        if in_server:
            await fake.say_in_server(ANN, "hello", mention=True)
            yield await until_doubtful(store, p.GUILD_CHANNEL_ID)
        else:
            await fake.dm(ANN, "hello")
            yield await until_doubtful(store, ANN_DM)


def in_channel(fake: FakeDiscord, channel_id: int) -> list[Shown]:
    """What the channel shows, interaction answers (ephemeral, one person's) aside."""
    return [shown for shown in fake.in_channel(channel_id) if shown.token is None]


def texts(fake: FakeDiscord, channel_id: int) -> list[str]:
    return [shown.content for shown in in_channel(fake, channel_id)]


def resend_id(notice: Shown) -> str:
    [custom_id] = notice.custom_ids()
    return custom_id


# After a 500, discord.py waits a second and tries again (the same nonce: Discord answers with the
# first message), within the default patience.
@pytest.mark.parametrize(("hang_s", "patience_s"), [(0.0, 30.0), (HANG_S, PATIENCE_S)], ids=["500", "hang"])
async def test_a_reply_discord_kept_then_failed_shows_once_and_its_reaction_counts(
    fake: FakeDiscord,
    store: SqliteStore,
    feedback: Feedback,
    hang_s: float,
    patience_s: float,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    fake.rest.fail_after_delivery("POST", CREATE, hang_s=hang_s)
    async with running(services(store), request_timeout_s=patience_s):
        await fake.dm(ANN, "are you there?")
        await wait_until(lambda: texts(fake, ANN_DM) == [REPLY], what="the reply Discord kept")
        if hang_s:
            # The client gave up on the create: the id it never learned is the reply's all the same.
            assert (await until_doubtful(store, ANN_DM)).status == "unknown"
        else:
            await wait_until(lambda: creates(fake) == [500, 200], what="discord.py's second try")
        [reply] = in_channel(fake, ANN_DM)
        await fake.react(ANN, reply, "👍")
        await wait_until(lambda: len(feedback()) == 1, what="the reaction recorded")
        assert await doubts(store, ANN_DM) == []
        await fake.dm(ANN, "and now?")
        await wait_until(lambda: len(texts(fake, ANN_DM)) == 2, what="the next answer")
        assert await settled(lambda: texts(fake, ANN_DM) == [REPLY, REPLY])  # no notice
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["feedback_events"] == 1


async def test_a_reply_to_a_message_of_unknown_delivery_confirms_it(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with first_reply_in_doubt(fake, store, lost=False, in_server=True):
        [shown] = in_channel(fake, p.GUILD_CHANNEL_ID)
        # A reply to Kindred's message, with no mention: Discord sends the message it references.
        await fake.say_in_server(ANN, "yes, got it", replying_to=fake.rest.payload(shown))
        await wait_until(lambda: len(texts(fake, p.GUILD_CHANNEL_ID)) == 2, what="the answer")
        assert texts(fake, p.GUILD_CHANNEL_ID) == [REPLY, REPLY]  # two answers; no notice
        assert await doubts(store, p.GUILD_CHANNEL_ID) == []


async def test_a_reply_that_never_arrived_is_told_once_and_its_button_sends_it_once(
    fake: FakeDiscord, store: SqliteStore, feedback: Feedback
) -> None:
    async with first_reply_in_doubt(fake, store, lost=True, in_server=False) as doubt:
        assert texts(fake, ANN_DM) == []
        await fake.dm(ANN, "are you there?")
        await wait_until(lambda: len(texts(fake, ANN_DM)) == 2, what="the notice and the answer")
        assert texts(fake, ANN_DM) == [NOTICE, REPLY]
        notice = in_channel(fake, ANN_DM)[0]
        assert resend_id(notice) == f"resend:{doubt.turn_id}"
        presses = [await fake.press(ANN, notice, resend_id(notice)) for _ in range(2)]

        def answered() -> list[str]:
            return [shown.content for token in presses for shown in fake.answers(token)]

        await wait_until(lambda: len(answered()) == 2, what="both presses answered")
        assert sorted(answered()) == sorted([SENT_AGAIN, NOTHING_TO_SEND])
        await wait_until(lambda: len(texts(fake, ANN_DM)) == 3, what="the reply sent again")
        assert await settled(lambda: texts(fake, ANN_DM) == [NOTICE, REPLY, REPLY])
        # Told once: the next message gets its answer only.
        await fake.dm(ANN, "thanks")
        await wait_until(lambda: len(texts(fake, ANN_DM)) == 4, what="the next answer")
        assert texts(fake, ANN_DM).count(NOTICE) == 1
        # A reaction on the copy sent again reaches the turn.
        await fake.react(ANN, in_channel(fake, ANN_DM)[2], "❤️")
        await wait_until(lambda: len(feedback()) == 1, what="the reaction on the copy")
    assert await store.deliveries.waiting("discord", f"discord:{ANN_DM}") == []


async def test_someone_else_cannot_ask_for_a_persons_reply_again(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with first_reply_in_doubt(fake, store, lost=True, in_server=True):
        await fake.say_in_server(ANN, "still there?", mention=True)
        await wait_until(lambda: len(texts(fake, p.GUILD_CHANNEL_ID)) == 2, what="the notice and the answer")
        notice = in_channel(fake, p.GUILD_CHANNEL_ID)[0]
        assert notice.content == NOTICE
        refused = await fake.press(BEN, notice, resend_id(notice), where="server")
        await wait_until(lambda: len(fake.answers(refused)) == 1, what="the refusal")
        [answer] = fake.answers(refused)
        assert (answer.content, answer.ephemeral) == (NOTHING_TO_SEND, True)
        assert await settled(lambda: texts(fake, p.GUILD_CHANNEL_ID) == [NOTICE, REPLY])
        # The refusal spent nothing: the reply's own person still gets it, once.
        await fake.press(ANN, notice, resend_id(notice), where="server")
        await wait_until(lambda: texts(fake, p.GUILD_CHANNEL_ID) == [NOTICE, REPLY, REPLY])
