"""A locked database must not cost a person their words: turns wait in the outbox, are written
in order once the lock goes, and are spilled to an importable file if it never does."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.conversation import STORE_DOWN_NOTICE, Conversation, ConversationPolicy
from bot.core.errors import StoreUnavailable
from bot.core.events import MessageReaction, Reaction, ReactionResult, ReplyDone
from bot.core.memory_file import parse_lines
from bot.store.sqlite import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference, reply_done

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "k.db", busy_timeout_ms=50)
    yield opened
    await opened.close()


def locker(path: Path) -> sqlite3.Connection:
    """Another process's exclusive write lock, as a second connection holds it."""
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    return other


async def say(conv: Conversation, text: str) -> ReplyDone:
    return await reply_done(conv, text, at=T0)


def conversation(store: SqliteStore) -> Conversation:
    return Conversation(
        store, HashEmbedder(), ScriptedInference("ok"), ConversationPolicy(persona="p", reactions={"👍": 1.0})
    )


async def test_a_locked_database_maps_to_store_unavailable(store: SqliteStore, tmp_path: Path) -> None:
    lock = locker(tmp_path / "k.db")
    try:
        with pytest.raises(StoreUnavailable, match="locked"):
            await store.remove_feedback(1, "ann", "reaction")
        # Reads still work: WAL lets them past a writer's lock.
        assert await store.recent_turns("ann", "c1", 5) == []
    finally:
        lock.execute("ROLLBACK")
        lock.close()


async def test_turns_wait_while_locked_and_are_written_in_order_after(
    store: SqliteStore, tmp_path: Path
) -> None:
    conv = conversation(store)
    await say(conv, "before the lock")
    lock = locker(tmp_path / "k.db")
    try:
        done = await say(conv, "during the lock")
        assert done.turn_id is None and done.notice == STORE_DOWN_NOTICE
        assert done.text == "ok"  # the person still gets an answer
        assert len(conv.outbox) == 2
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    await say(conv, "after the lock")
    assert len(conv.outbox) == 0
    turns = await store.recent_turns("ann", "c1", 10)
    assert [t.text for t in turns if t.role == "user"] == [
        "before the lock",
        "during the lock",
        "after the lock",
    ]
    assert len(turns) == 6


async def test_a_reaction_during_a_lock_is_kept_and_written_later(store: SqliteStore, tmp_path: Path) -> None:
    conv = conversation(store)
    done = await say(conv, "hello")
    assert done.turn_id is not None
    lock = locker(tmp_path / "k.db")
    try:
        assert await conv.handle_reaction(Reaction("ann", done.turn_id, "👍", T0)) == 1.0
        assert len(conv.outbox) == 1
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert await conv.flush() == 1
    assert (await store.stats()).feedback_events == 1


async def test_a_reaction_on_a_reply_whose_link_still_waits_is_recorded(
    store: SqliteStore, tmp_path: Path
) -> None:
    """The store is back, but the reply's link is still in the outbox (nothing wrote since): the
    reaction finds it there, and the link and then the reaction reach the store."""
    conv = conversation(store)
    done = await say(conv, "hello")
    assert done.turn_id is not None
    lock = locker(tmp_path / "k.db")
    try:
        await conv.link_reply("telegram", "telegram:1", ["77"], done, "ann")
        assert len(conv.outbox) == 1
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    event = MessageReaction("telegram", "telegram:1", "77", "ann", "👍", T0)
    assert await conv.handle_message_reaction(event) == ReactionResult("recorded", 1.0)
    assert len(conv.outbox) == 0
    assert await store.find_message("telegram", "telegram:1", "77") is not None
    assert (await store.stats()).feedback_events == 1


async def test_words_still_unsaved_at_exit_spill_to_an_importable_file(
    store: SqliteStore, tmp_path: Path
) -> None:
    conv = conversation(store)
    lock = locker(tmp_path / "k.db")
    try:
        await say(conv, "remember: the café on Rua Augusta closed")
        [turns] = conv.outbox.spill(tmp_path / "unsaved", "stamp")
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    lines = turns.read_bytes().splitlines()
    parsed = parse_lines(lines)
    assert parsed.errors == []
    assert [item.text for item in parsed.items] == ["remember: the café on Rua Augusta closed", "ok"]
    assert json.loads(lines[0])["meta"]["chat_id"] == "c1"
    assert len(conv.outbox) == 0
