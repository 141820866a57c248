"""Webhook mode: Telegram posts updates to Kindred's web server, which takes only those with the secret."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from bot.web.server import WebServer, build_web_app
from tests.adapters.telegram.conftest import ANN, replies_done, running_bot
from tests.support.telegram_api import FakeTelegramBotApi


async def test_webhook_mode_takes_only_posts_with_the_secret(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async def health() -> dict[str, object]:
        return {}

    url = "https://bot.example.org/hooks/telegram"
    async with running_bot(api, tmp_path, webhook_url=url) as bot:
        config = bot.adapter.config
        assert api.webhook is not None and api.webhook["url"] == url
        assert api.webhook["secret_token"] == config.secret and len(config.secret) >= 32
        assert "message_reaction" in api.webhook["allowed_updates"]
        assert config.webhook_path == "/hooks/telegram"
        web = WebServer(
            build_web_app(webhooks={"/hooks/telegram": bot.adapter.handle_webhook}, health=health)
        )
        port = await web.start("127.0.0.1", 0)
        update = api.private_message(ANN, "hello by webhook")
        target = f"http://127.0.0.1:{port}/hooks/telegram"
        header = "X-Telegram-Bot-Api-Secret-Token"
        try:
            async with aiohttp.ClientSession() as http:

                async def post(body: object, headers: dict[str, str]) -> int:
                    async with http.post(target, json=body, headers=headers) as response:
                        return response.status

                assert await post(update, {}) == 403
                assert await post(update, {header: "guess"}) == 403
                assert await post({"not": "an update"}, {header: config.secret}) == 400
                async with http.post(target, data=b"\xff{", headers={header: config.secret}) as response:
                    assert response.status == 400
                assert await post(update, {header: config.secret}) == 200
                await replies_done(api, ANN, 1)
                assert await post(update, {header: config.secret}) == 200  # Telegram retries
                later = api.private_message(ANN, "and one more")
                assert await post(later, {header: config.secret}) == 200
                await replies_done(api, ANN, 2)
                async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                    assert (await response.json())["ok"] is True
        finally:
            await web.stop()
        assert len(api.texts(ANN)) == 2, "the retried update was answered once"
        turns = await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}")
        assert [text for role, text in turns if role == "user"] == ["hello by webhook", "and one more"]
        assert not api.calls_of("getUpdates"), "webhook mode never polls"
