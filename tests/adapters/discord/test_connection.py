"""The connection itself: the intents asked for, a 429 waited out, a gateway drop resumed with
nothing lost, a rejected token, and the token kept out of every log line."""

from __future__ import annotations

import logging

import pytest
from pydantic import SecretStr

from bot.adapters.discord.adapter import DiscordAdapter
from bot.adapters.discord.client import needed_intents
from bot.core.errors import ConfigError
from bot.store.sqlite.store import SqliteStore
from bot.wiring.platforms import discord_options
from bot.wiring.settings import DiscordSettings
from tests.adapters.discord.conftest import OPTIONS, running, services
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord
from tests.support.fakes import SlowInference
from tests.support.waiting import wait_until

REPLY = "Nice to hear from you."
MEMBERS, PRESENCES, MESSAGE_CONTENT = 1 << 1, 1 << 8, 1 << 15


def answered(fake: FakeDiscord, message: p.Payload) -> bool:
    return [shown.content for shown in fake.replies_to(message)] == [REPLY]


async def test_identify_asks_only_for_the_intents_kindred_needs(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(services(store)):
        pass
    async with running(services(store), message_content=True):
        pass
    without, with_content = (identify["intents"] for identify in fake.gateway.log.identifies)
    assert without == needed_intents(message_content=False).value
    assert without & (MEMBERS | PRESENCES | MESSAGE_CONTENT) == 0  # nothing privileged by default
    assert with_content == without | MESSAGE_CONTENT


async def test_a_429_is_waited_out_and_the_reply_still_arrives(fake: FakeDiscord, store: SqliteStore) -> None:
    fake.rest.throttle("POST", r"/channels/\d+/messages$", retry_after=0.2)
    async with running(services(store)):
        message = await fake.dm(ANN, "are you there?")
        await wait_until(lambda: answered(fake, message), what="the reply after the 429")
    posts = [call for call in fake.rest.calls if call.method == "POST" and call.path.endswith("/messages")]
    assert [call.status for call in posts] == [429, 200]
    assert posts[1].at - posts[0].at >= 0.2  # discord.py waited as told
    assert posts[0].json == posts[1].json  # and sent the same message again


async def test_a_429_on_an_interaction_webhook_is_waited_out(fake: FakeDiscord, store: SqliteStore) -> None:
    fake.rest.throttle("PATCH", r"/webhooks/\d+/[^/]+/messages/@original$", times=2, retry_after=0.2)
    async with running(services(store)):
        token = await fake.slash(ANN, "chat", message="hello")
        await wait_until(lambda: [m.content for m in fake.answers(token)] == [REPLY], what="the reply")
    statuses = [call.status for call in fake.rest.calls if call.path.endswith("/@original")]
    assert statuses[:3] == [429, 429, 200]


async def test_after_a_gateway_drop_the_client_resumes_and_nothing_is_lost(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(services(store)):
        before = await fake.dm(ANN, "before the drop")
        await wait_until(lambda: answered(fake, before))
        last_seq = len(fake.gateway.sent)
        await fake.gateway.drop(code=4000)
        during = await fake.dm(ANN, "while the connection was down")  # kept for the RESUME
        await wait_until(lambda: bool(fake.gateway.log.resumes), what="a RESUME")
        await wait_until(fake.gateway.connected.is_set, what="RESUMED")
        await wait_until(lambda: answered(fake, during), what="the reply to the replayed message")
        # One at a time: concurrent turns need the store fix that test_concurrency.py waits for.
        after = await fake.dm(ANN, "after the resume")
        await wait_until(lambda: answered(fake, after), what="the reply after the resume")
    log = fake.gateway.log
    assert log.connections[:2] == ["/gateway", "/resume-gateway"]  # resumed where READY said to
    assert len(log.identifies) == 1  # the session went on; no new IDENTIFY
    resume = log.resumes[0]
    assert resume["session_id"] == fake.gateway.session_id and resume["token"] == p.TOKEN
    assert resume["seq"] >= last_seq - 1  # it had seen everything up to the drop
    turns = await store.turns.recent_turns(f"discord:{ANN['id']}", f"discord:{int(ANN['id']) + 1}", 10)
    assert [turn.text for turn in turns if turn.role == "user"] == [
        "before the drop",
        "while the connection was down",
        "after the resume",
    ]


async def test_the_token_never_appears_in_a_log(
    fake: FakeDiscord, store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.rest.throttle("POST", r"/channels/\d+/messages$")
    async with running(services(store)) as adapter:
        message = await fake.dm(ANN, "hello")
        await wait_until(lambda: answered(fake, message))
        token = await fake.slash(ANN, "chat", message="and again")
        await wait_until(lambda: bool(fake.answers(token)) and fake.answers(token)[0].content == REPLY)
        await fake.gateway.drop()
        await wait_until(lambda: bool(fake.gateway.log.resumes))
        logging.getLogger("test").info("adapter options: %r", adapter.options)
    assert "discord.http" in caplog.text  # discord.py did log at DEBUG
    assert p.TOKEN not in caplog.text
    assert p.TOKEN.split(".")[0] not in caplog.text


async def test_a_rejected_token_stops_start_with_a_clear_error(fake: FakeDiscord, store: SqliteStore) -> None:
    with pytest.raises(ConfigError, match="DISCORD_BOT_TOKEN") as raised:
        async with running(services(store), token=SecretStr("not-the-token")):
            pass
    assert "not-the-token" not in str(raised.value)
    assert not fake.gateway.log.connections  # it never went on to the gateway


async def test_the_discord_options_come_from_the_settings(fake: FakeDiscord, store: SqliteStore) -> None:
    settings = DiscordSettings(
        DISCORD_BOT_TOKEN=p.TOKEN, DISCORD_DEV_GUILD_ID=p.GUILD_ID, feedback_buttons=False
    )
    options = discord_options(settings)
    assert options.feedback_buttons is False and options.message_content is False
    adapter = DiscordAdapter(services(store), options)
    assert adapter.name == "discord"
    await adapter.start()
    await adapter.stop()
    assert f"/guilds/{p.GUILD_ID}/commands" in " ".join(fake.rest.commands)
    with pytest.raises(ConfigError, match="DISCORD_BOT_TOKEN"):
        discord_options(DiscordSettings(DISCORD_BOT_TOKEN=None))
    assert OPTIONS.token.get_secret_value() == p.TOKEN


async def test_stop_lets_a_reply_being_written_finish(fake: FakeDiscord, store: SqliteStore) -> None:
    reply = " ".join(["slowly"] * 40)
    adapter = DiscordAdapter(services(store, inference=SlowInference(reply, 0.01)), OPTIONS)
    await adapter.start()
    message = await fake.dm(ANN, "take your time")
    await wait_until(lambda: bool(fake.replies_to(message)), what="the reply to begin")
    await adapter.stop()
    assert [shown.content for shown in fake.replies_to(message)] == [reply]
    assert (await store.stats()).turns == 2
