"""The webhook with its state in a real Redis that goes away for a while (a restart, a network
blip): the post that came meanwhile is answered 503, Telegram sends it again, and it is answered
once. Nothing a person wrote is lost, and nothing is answered twice."""

from __future__ import annotations

import uuid
from pathlib import Path

from redis.asyncio import Redis

from bot.shared_state.connection import connect
from bot.shared_state.redis_intake import RedisIntake
from bot.web.server import WebServer, build_web_app
from tests.adapters.telegram.conftest import ANN, replies_done, running_bot
from tests.jobs.workerproc import redis_url
from tests.support.redis_server import redis_host
from tests.support.tcp_link import CuttableLink
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.webhook_push import WebhookPusher


async def test_a_post_while_redis_is_away_is_refused_and_answered_once_when_sent_again(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async def health() -> dict[str, object]:
        return {}

    namespace = uuid.uuid4().hex
    host, port = redis_host().split(":")
    async with CuttableLink(host, int(port)) as link:
        client = connect(f"redis://127.0.0.1:{link.port}/{redis_url().rsplit('/', 1)[1]}")
        intake = RedisIntake(client, namespace=namespace)
        url = "https://bot.example.org/telegram/webhook"
        async with running_bot(api, tmp_path, webhook_url=url, intake=intake) as bot:
            web = WebServer(
                build_web_app(webhooks={"/telegram/webhook": bot.adapter.handle_webhook}, health=health)
            )
            port = await web.start("127.0.0.1", 0)
            target = f"http://127.0.0.1:{port}/telegram/webhook"
            try:
                async with WebhookPusher(target, bot.adapter.config.secret) as telegram:
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
            finally:
                await web.stop()
            turns = await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}")
        await intake.close()
        await client.aclose()
    assert [text for role, text in turns if role == "user"] == ["before", "while Redis restarts"]
    assert len(api.texts(ANN)) == 2, "each message answered once"
    cleaner = Redis.from_url(redis_url())
    async for key in cleaner.scan_iter(f"kindred:shared:{namespace}:*"):
        await cleaner.delete(key)
    await cleaner.aclose()
