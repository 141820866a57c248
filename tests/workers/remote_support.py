"""Helpers for the remote-inference tests: GPU workers on the tiny model, a console chat wired
through `load_inference` with KINDRED_INFERENCE_BACKEND=celery, and a look into reply streams."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import redis

from bot.adapters.console import CHAT_ID, ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation
from bot.core.chat.sentences import whole_sentences
from bot.core.models import Turn
from bot.inference.gpu_workers.reply_stream import Entry, parse_entry
from bot.store.sqlite.store import SqliteStore
from bot.wiring.backends import load_inference
from bot.wiring.kindred import policy
from bot.wiring.settings import (
    ChatSettings,
    GeneralSettings,
    InferenceSettings,
    Settings,
    StoreSettings,
    WorkerSettings,
)
from tests.jobs.workerproc import Worker
from tests.support.fakes import HashEmbedder

APP = "tests.workers.inference_worker_app"
USER = "ann"


def gpu_worker(
    url: str,
    folder: Path,
    model: Path,
    *,
    pace_s: float = 0.0,
    pool: str = "solo",
    threads: int = 1,
    **env: str,
) -> Worker:
    """A worker on the `gpu` queue (CPU torch) serving the tiny model: solo, or `threads` threads."""
    extra = {"KINDRED_MODEL": str(model), "KINDRED_DEVICE": "cpu", "KINDRED_TEST_REPLY_PACE_S": str(pace_s)}
    loglevel = "DEBUG" if pool == "threads" else "INFO"  # DEBUG shows the batch sizes
    return Worker(
        url, folder, queues="gpu", app=APP, pool=pool, concurrency=threads, loglevel=loglevel, **extra, **env
    )


def chat_settings(
    url: str, folder: Path, model: Path, *, wait_s: float = 60.0, max_tokens: int = 24
) -> Settings:
    return Settings(
        workers=WorkerSettings(REDIS_URL=url),
        general=GeneralSettings(data_dir=folder),
        store=StoreSettings(DATABASE_URL=f"sqlite:///{folder / 'chat.db'}"),
        inference=InferenceSettings(
            model=str(model),
            KINDRED_INFERENCE_BACKEND="celery",
            KINDRED_INFERENCE_WAIT_S=wait_s,
            # Generous: on a shared 2-core machine a worker's start and model load can take a while.
            generation_timeout_s=120.0,
        ),
        chat=ChatSettings(max_new_tokens=max_tokens),
    )


@dataclass
class Chat:
    """A console chat over a pipe: what the person would read is `out`."""

    console: ConsoleChat
    conversation: Conversation
    store: SqliteStore
    out: io.StringIO

    @classmethod
    async def open(cls, settings: Settings) -> Chat:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        store = await SqliteStore.open(settings.sqlite_path)
        conversation = Conversation(store, HashEmbedder(), load_inference(settings), policy(settings))
        out = io.StringIO()
        console = ConsoleChat(conversation, USER, ConsoleIO(lambda: "", out, io.StringIO(), False))
        return cls(console, conversation, store, out)

    async def turns(self) -> list[Turn]:
        return await self.store.turns.recent_turns(USER, CHAT_ID, 20)

    def shown(self, found: list[Entry]) -> str:
        """A reply as the person reads it, from its stream's entries: the tiny model rarely ends
        one, and a reply the token budget cut ends at its last whole sentence (core/chat/sentences.py).
        Cut is what the worker's end entry says, as the conversation takes it; a stream with no
        reason is judged by re-counting, as the conversation does then."""
        written = "".join(entry.text for entry in chunks(found))
        reason = next((entry.reason for entry in found if entry.kind == "end"), None)
        if reason is None:
            limit = self.conversation.policy.max_new_tokens
            cut = self.conversation.inference.count_tokens(written) >= limit
        else:
            cut = reason == "length"
        return whole_sentences(written.strip()) if cut else written.strip()

    async def close(self) -> None:
        close = getattr(self.conversation.inference, "close", None)
        if close is not None:
            await close()
        await self.store.close()


def reply_streams(url: str) -> list[str]:
    client = redis.Redis.from_url(url)
    try:
        return sorted(key.decode() for key in client.scan_iter("kindred:reply:*"))
    finally:
        client.close()


def entries(url: str, key: str) -> list[Entry]:
    client = redis.Redis.from_url(url)
    try:
        return [parse_entry(fields) for _, fields in client.xrange(key)]
    finally:
        client.close()


def chunks(found: list[Entry]) -> list[Entry]:
    return [entry for entry in found if entry.kind == "chunk"]
