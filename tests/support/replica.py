"""One bot replica in a process of its own: `python -m tests.support.replica`, configured by the
environment as `kindred run` is (TELEGRAM_*, KINDRED_SHARED_STATE_URL, DATABASE_URL, KINDRED_WEB_PORT…).

It is `kindred run` wired by the same composition root (`platforms`: the real python-telegram-bot
adapter in webhook mode; `open_shared_state`: Redis or this process) with the model and the
embedder replaced by fixtures, so that a test can run several at once on two cores. The model
echoes the person's message ("re: …") after `REPLICA_REPLY_DELAY_S`, so that a test can tell the
replies apart and catch a replica mid-reply. It prints one JSON line, {"port": …}, once it
serves, and stops cleanly on SIGTERM: what was accepted is finished, new posts get 503.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Sequence

from bench.parts.telegram.fixtures import LoadFixtureEmbedder
from bot.adapters.base import Services
from bot.cli.logs import setup_logging
from bot.core.chat.access import Access
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.ratelimit import RateLimiter
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.memory.controls import Controls
from bot.core.models import ChatMessage, Sampled, StreamEnd
from bot.web.server import WebServer, build_web_app
from bot.wiring.backends import open_store
from bot.wiring.platforms import platforms
from bot.wiring.settings import load_settings, secret_values
from bot.wiring.shared_state import open_shared_state

PERSONA = "replica test"


class EchoFixture:
    """NOT a model: answers "re: <the person's message>", after a pause, in two chunks."""

    context_window = 2048

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        await asyncio.sleep(self.delay_s)
        yield "re: "
        yield messages[-1].content

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        await asyncio.sleep(self.delay_s)
        return [Sampled("re: " + messages[-1].content, False)] * n


async def serve() -> None:
    settings = load_settings(env_file=None)
    setup_logging(settings.general.log_level, secret_values(settings))
    store = await open_store(settings)
    shared = open_shared_state(settings)
    conversation = Conversation(
        store,
        LoadFixtureEmbedder(),
        EchoFixture(float(os.environ.get("REPLICA_REPLY_DELAY_S", "0"))),
        ConversationPolicy(persona=PERSONA, reactions=DEFAULT_REACTIONS),
    )
    chat = settings.chat
    services = Services(
        conversation=conversation,
        controls=Controls(store, PERSONA),
        limiter=RateLimiter(chat.user_messages_per_minute, chat.user_message_burst, buckets=shared.buckets),
        access=Access(),
        intake=shared.intake,
    )
    found = platforms(settings, services)

    async def health() -> dict[str, object]:
        return {"shared_state": shared.where}

    web = WebServer(build_web_app(webhooks=found.webhooks, health=health))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    port = await web.start(settings.web.host, settings.web.port)
    try:
        for adapter in found.adapters:
            await adapter.start()
        print(json.dumps({"port": port}), flush=True)
        await stop.wait()
    finally:
        for adapter in found.adapters:
            await adapter.stop()
        await web.stop()
        await conversation.flush()
        await store.close()
        await shared.close()


if __name__ == "__main__":
    asyncio.run(serve())
    sys.exit(0)
