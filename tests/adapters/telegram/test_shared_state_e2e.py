"""The webhook with its state in a real Redis that goes away for a while (a restart, a network
blip) or comes back empty (a failover): the post that came meanwhile is answered 503, Telegram
sends it again, and it is answered once; a copy of an update answered before the failover is not
answered again. Nothing a person wrote is lost, and nothing is answered twice."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from redis.asyncio import Redis

from bot.shared_state.connection import connect
from bot.shared_state.redis_intake import RedisIntake
from bot.web.server import WebServer, build_web_app
from tests.adapters.telegram.conftest import ANN, Running, replies_done, running_bot
from tests.jobs.workerproc import redis_url
from tests.support.redis_server import redis_host
from tests.support.tcp_link import CuttableLink
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.webhook_push import WebhookPusher


async def forget(namespace: str) -> None:
    """Every key of the intake's namespace gone: Redis as a failover brings it back."""
    cleaner = Redis.from_url(redis_url())
    async for key in cleaner.scan_iter(f"kindred:shared:{namespace}:*"):
        await cleaner.delete(key)
    await cleaner.aclose()


@asynccontextmanager
async def webhook_bot(
    api: FakeTelegramBotApi, tmp_path: Path, link: CuttableLink, namespace: str
) -> AsyncIterator[tuple[Running, WebhookPusher]]:
    """The bot behind its webhook, its intake in Redis through `link`; and Telegram pushing to it."""

    async def health() -> dict[str, object]:
        return {}

    client = connect(f"redis://127.0.0.1:{link.port}/{redis_url().rsplit('/', 1)[1]}")
    intake = RedisIntake(client, namespace=namespace)
    url = "https://bot.example.org/telegram/webhook"
    try:
        async with running_bot(api, tmp_path, webhook_url=url, intake=intake) as bot:
            web = WebServer(
                build_web_app(webhooks={"/telegram/webhook": bot.adapter.handle_webhook}, health=health)
            )
            port = await web.start("127.0.0.1", 0)
            try:
                target = f"http://127.0.0.1:{port}/telegram/webhook"
                async with WebhookPusher(target, bot.adapter.config.secret) as telegram:
                    yield bot, telegram
            finally:
                await web.stop()
    finally:
        await intake.close()
        await client.aclose()
        await forget(namespace)


async def test_a_post_while_redis_is_away_is_refused_and_answered_once_when_sent_again(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    host, port = redis_host().split(":")
    async with (
        CuttableLink(host, int(port)) as link,
        webhook_bot(api, tmp_path, link, uuid.uuid4().hex) as (bot, telegram),
    ):
        assert (await telegram.deliver(api.private_message(ANN, "before"))).statuses == [200]
        await replies_done(api, ANN, 1)
        await link.cut()
        during = api.private_message(ANN, "while Redis restarts")
        assert await telegram.post_once(during) == 503
        await link.restore()
        again = await telegram.deliver(during)
        assert again.statuses[-1] == 200
        await replies_done(api, ANN, 2)
        assert await telegram.post_once(during) == 200  # and once more: a copy now
        turns = await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}")
    assert [text for role, text in turns if role == "user"] == ["before", "while Redis restarts"]
    assert len(api.texts(ANN)) == 2, "each message answered once"


async def test_a_copy_of_an_answered_update_after_a_failover_is_not_answered_again(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    """Telegram sends an update again when its post timed out, though the bot answered it; Redis
    meanwhile came back empty, so the intake lets the copy in. The store knows the reply."""
    namespace = uuid.uuid4().hex
    host, port = redis_host().split(":")
    async with (
        CuttableLink(host, int(port)) as link,
        webhook_bot(api, tmp_path, link, namespace) as (bot, telegram),
    ):
        update = api.private_message(ANN, "answered, though Telegram never heard the 200")
        assert (await telegram.deliver(update)).statuses == [200]
        await replies_done(api, ANN, 1)
        await forget(namespace)
        assert await telegram.post_once(update) == 200
        later = api.private_message(ANN, "and a new message")
        assert (await telegram.deliver(later)).statuses == [200]
        await replies_done(api, ANN, 2)
        turns = await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}")
    assert len(api.texts(ANN)) == 2, "the copy got no second reply"
    assert [role for role, _ in turns] == ["user", "assistant", "user", "assistant"]
