"""What `kindred run` serves: every platform with a token, or those KINDRED_RUN_PLATFORMS names
(replicas behind one address take Telegram's webhook; Discord's gateway stays with one process)."""

from __future__ import annotations

import pytest

from bot.adapters.base import Services
from bot.core.chat.access import Access
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.ratelimit import RateLimiter
from bot.core.memory.controls import Controls
from bot.shared_state.local_buckets import LocalBuckets
from bot.shared_state.local_intake import LocalIntake
from bot.store.sqlite.store import SqliteStore
from bot.wiring.platforms import configured, platforms
from bot.wiring.settings import load_settings
from tests.support.fakes import HashEmbedder, ScriptedInference


@pytest.fixture(autouse=True)
def both_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(("KINDRED_", "TELEGRAM_", "DISCORD_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:telegram-token-for-this-test")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.org/telegram/webhook")
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "discord-token-for-this-test")


async def test_a_replica_told_to_serve_telegram_leaves_discord_alone(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KINDRED_RUN_PLATFORMS", "telegram")
    settings = load_settings(env_file=None)
    conversation = Conversation(store, HashEmbedder(), ScriptedInference(), ConversationPolicy(persona="p"))
    limiter = RateLimiter(0, 1, LocalBuckets())
    services = Services(conversation, Controls(store, "p"), limiter, Access(), LocalIntake())
    found = platforms(settings, services)
    assert [adapter.name for adapter in found.adapters] == ["telegram"]
    assert list(found.webhooks) == ["/telegram/webhook"]
    monkeypatch.setenv("KINDRED_RUN_PLATFORMS", "discord")
    monkeypatch.delenv("DISCORD_BOT_TOKEN")
    assert not configured(load_settings(env_file=None)), "told to serve only a platform with no token"
