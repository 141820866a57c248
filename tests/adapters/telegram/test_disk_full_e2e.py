"""The SQLite store's disk full while a person writes (issue 32's hostile case), through the real
webhook path: the loopback Bot API pushes the update to Kindred's web server as Telegram does
(tests/support/telegram_push.py), and the store's file sits on a real size-limited tmpfs that is
filled to the last byte (tests/support/full_disk.py).

The person's message is not lost: the webhook takes it (200, so Telegram does not post it again),
the bot answers it once with a plain notice that its memory is unavailable and keeps the words, and
once space returns it stores them, whole and once, with no restart and no second answer. A
reaction on that answer while the disk is still full is kept as well, and counts once it is stored."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.telegram.chat import FEEDBACK_DOWN
from bot.core.chat.conversation import STORE_DOWN_NOTICE
from bot.core.chat.outbox import keep_flushing
from bot.store.sqlite.store import SqliteStore
from bot.web.server import WebServer, build_web_app
from tests.adapters.telegram.conftest import ANN, Running, replies_done, running_bot
from tests.support.full_disk import FullDisk, full_disk
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.telegram_push import WebhookPusher

HOOK = "https://bot.example.org/hooks/telegram"
REPLY = "Lovely to hear from you."
# Longer than a page: storing it needs new pages whatever room the file's last ones have left.
DURING = "While the disk was full I told you about the river. " * 70
RETRY_S = 0.2  # how often the waiting words are tried again (`kindred run` does it every few seconds)


@contextlib.asynccontextmanager
async def webhook(api: FakeTelegramBotApi, bot: Running) -> AsyncIterator[WebhookPusher]:
    """Kindred's web server with the bot's webhook, and Telegram's side pushing every update to it."""

    async def health() -> dict[str, object]:
        return {}

    web = WebServer(build_web_app(webhooks={"/hooks/telegram": bot.adapter.handle_webhook}, health=health))
    port = await web.start("127.0.0.1", 0)
    pusher = WebhookPusher(api, f"http://127.0.0.1:{port}")
    await pusher.start()
    try:
        yield pusher
    finally:
        await pusher.stop()
        await web.stop()


def user_turns(path: Path) -> list[tuple[str, int]]:
    """Each stored user turn's text, with how many memories (its vector and words) it has."""
    with sqlite3.connect(path) as raw:
        return raw.execute(
            "SELECT t.text, (SELECT count(*) FROM memories m WHERE m.source_turn_id = t.id)"
            " FROM turns t WHERE t.role = 'user' ORDER BY t.id"
        ).fetchall()


def feedback(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as raw:
        return raw.execute("SELECT source, emoji FROM feedback ORDER BY turn_id, source").fetchall()


async def test_a_message_while_the_disk_is_full_is_answered_once_kept_and_stored_once_space_returns(
    api: FakeTelegramBotApi, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with full_disk(tmp_path / "disk") as disk:
        path = disk.folder / "kindred.db"
        async with (
            running_bot(api, tmp_path, webhook_url=HOOK, place=str(path)) as bot,
            webhook(api, bot) as pusher,
        ):
            await during_and_after(api, bot, disk, pusher, path, caplog)


async def during_and_after(
    api: FakeTelegramBotApi,
    bot: Running,
    disk: FullDisk,
    pusher: WebhookPusher,
    path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, outbox = bot.store, bot.adapter.services.conversation.outbox
    assert isinstance(store, SqliteStore)
    api.private_message(ANN, "hello before")
    await replies_done(api, ANN, 1)

    await disk.fill_store(store)
    with caplog.at_level(logging.WARNING, logger="bot.core.chat.conversation"):
        api.private_message(ANN, DURING)
        await api.wait_until(lambda: len(api.texts(ANN)) == 2, what="the answer while the disk is full")
        await asyncio.sleep(0.5)  # a second answer, or Telegram posting the update again, would show now
    answer = api.bot_messages(ANN)[1]
    assert answer.text == f"{REPLY}\n\n{STORE_DOWN_NOTICE}", answer.text
    assert answer.reply_markup is None  # no 👍/👎 on a reply not stored yet
    assert all(d.statuses == [200] for d in pusher.deliveries.values()), pusher.deliveries
    kept = [r.getMessage() for r in caplog.records if "keeping a turn for later" in r.getMessage()]
    assert len(kept) == 1 and "disk is full" in kept[0] and DURING[:20] not in kept[0], kept
    # Nothing of it is stored yet, and nothing half: no turn without its memory.
    assert user_turns(path) == [("hello before", 1)]
    assert len(outbox) >= 2  # the words and the reply, waiting
    # The person reacts to that answer while the disk is still full: kept too, after the reply.
    api.reaction(ANN, answer.data["message_id"], ANN, old=[], new=["👍"])
    await api.wait_until(lambda: pusher.pending == 0, what="the reaction taken")

    await disk.free_store(store)
    # What `kindred run` does: the waiting words are tried again, with no new message to bring them.
    retrying = asyncio.create_task(keep_flushing(outbox, store.turns, RETRY_S))
    try:
        await api.wait_until(lambda: len(user_turns(path)) == 2, what="the kept words stored")
        await api.wait_until(lambda: not len(outbox), what="the outbox empty")
    finally:
        retrying.cancel()
    assert user_turns(path) == [("hello before", 1), (DURING.strip(), 1)]
    turns = await bot.turns(f"telegram:{ANN}", f"telegram:{ANN}")
    assert [role for role, _ in turns] == ["user", "assistant"] * 2
    assert feedback(path) == [("reaction", "👍")]
    # The reply's platform message was linked once stored: a press on it counts as well.
    api.callback(ANN, answer.data["message_id"], ANN, FEEDBACK_DOWN)
    await api.wait_until(lambda: len(feedback(path)) == 2, what="the press recorded")
    assert feedback(path) == [("button", "👎"), ("reaction", "👍")]

    api.private_message(ANN, "and after")
    await replies_done(api, ANN, 2)  # the first and this one carry buttons: stored at once
    assert api.texts(ANN) == [REPLY, answer.text, REPLY]
    assert [t for t, _ in user_turns(path)] == ["hello before", DURING.strip(), "and after"]
    await api.wait_until(lambda: pusher.pending == 0, what="every update taken")
    assert all(d.statuses == [200] for d in pusher.deliveries.values()), pusher.deliveries
