"""The bot of bench/soak.py: `kindred run` itself (bot/cli/run.py `serve`: the Telegram adapter,
the web server with its webhook, jobs on Celery when REDIS_URL is set, a graceful stop on SIGTERM),
with the load fixtures of bench/parts/telegram/fixtures.py in place of the model and the embedder.

    python -m bench.parts.soak.bot        # settings from the environment only, as `kindred run` reads them
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace

from bench.parts.telegram.fixtures import LoadFixtureEmbedder, LoadFixtureGenerator
from bot.cli.logs import setup_logging
from bot.cli.run import serve
from bot.core.chat.ports import Inference
from bot.core.memory.ports import Embedder
from bot.core.models import ChatMessage, Sampled, StreamEnd
from bot.wiring.kindred import build
from bot.wiring.settings import Settings, load_settings, secret_values

TAG = re.compile(r"\[r\d+\]")


class TaggingFixtureGenerator(LoadFixtureGenerator):
    """The load fixture's reply, opened by the tag ("[r7]") of the message it answers, so that
    the soak can tell which message each reply belongs to and in what order they came; opened,
    so that the notice of a reply of unknown delivery, which quotes the reply's first words,
    names it too."""

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        opening = _opening(messages)
        if opening:
            yield opening
        chunks = super().stream(messages, max_tokens=max_tokens, adapter=adapter, ending=ending, seed=seed)
        async for chunk in chunks:
            yield chunk

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        """Best of n (a reward model's canary, after the night): every candidate opened alike."""
        samples = await super().sample(messages, n=n, max_tokens=max_tokens, adapter=adapter, seed=seed)
        return [replace(sample, text=_opening(messages) + sample.text) for sample in samples]


def _opening(messages: Sequence[ChatMessage]) -> str:
    """The tag of the message answered, and a space; "" when it has none."""
    asked = next((m.content for m in reversed(messages) if m.role == "user"), "")
    tags = TAG.findall(asked)
    return f"{tags[-1]} " if tags else ""


async def load_fixtures(settings: Settings, started: float) -> tuple[Embedder, Inference]:
    return LoadFixtureEmbedder(), TaggingFixtureGenerator()


def main() -> None:
    settings = load_settings(env_file=None)
    setup_logging(settings.general.log_level, secret_values(settings))
    asyncio.run(serve(settings, open_companion=functools.partial(build, load_models=load_fixtures)))


if __name__ == "__main__":
    main()
