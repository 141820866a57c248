"""A locked database must not cost a person their words: turns wait in the outbox, are written
in order once the lock goes, and are spilled to an importable file if it never does."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.chat.conversation import STORE_DOWN_NOTICE, Conversation, ConversationPolicy
from bot.core.chat.outbox import keep_flushing
from bot.core.errors import StoreUnavailable
from bot.core.events import MessageReaction, Reaction, ReactionResult, ReplyDone
from bot.core.memory.jsonl_format import parse_lines
from bot.store.sqlite.store import SqliteStore
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


@contextmanager
def locked(path: Path) -> Iterator[None]:
    lock = locker(path)
    try:
        yield
    finally:
        lock.execute("ROLLBACK")
        lock.close()


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
            await store.turns.remove_feedback(1, "ann", "reaction")
        # Reads still work: WAL lets them past a writer's lock.
        assert await store.turns.recent_turns("ann", "c1", 5) == []
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
    turns = await store.turns.recent_turns("ann", "c1", 10)
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
    assert await store.turns.find_message("telegram", "telegram:1", "77") is not None
    assert (await store.stats()).feedback_events == 1


async def reply_during_a_lock(conv: Conversation, tmp_path: Path, *, link_while_locked: bool) -> ReplyDone:
    """A reply written while the store was locked (not stored, no id), linked to platform message
    77 during the lock or just after it, before anything else wrote."""
    with locked(tmp_path / "k.db"):
        done = await say(conv, "during the lock")
        assert done.turn_id is None and done.turn_key is not None
        if link_while_locked:
            await conv.link_reply("telegram", "telegram:1", ["77"], done, "ann")
    if not link_while_locked:
        await conv.link_reply("telegram", "telegram:1", ["77"], done, "ann")
    return done


@pytest.mark.parametrize("link_while_locked", [True, False])
async def test_a_reaction_on_a_reply_written_while_the_store_was_down_is_recorded(
    store: SqliteStore, tmp_path: Path, link_while_locked: bool
) -> None:
    """The person saw the reply and reacts to it: once the store is back, the reply is stored,
    its message linked by the reply's key, and the reaction credited to it."""
    conv = conversation(store)
    await reply_during_a_lock(conv, tmp_path, link_while_locked=link_while_locked)
    event = MessageReaction("telegram", "telegram:1", "77", "ann", "👍", T0)
    assert await conv.handle_message_reaction(event) == ReactionResult("recorded", 1.0)
    assert len(conv.outbox) == 0
    link = await store.turns.find_message("telegram", "telegram:1", "77")
    reply = [t for t in await store.turns.recent_turns("ann", "c1", 10) if t.role == "assistant"]
    assert link is not None and [t.id for t in reply] == [link.turn_id]
    assert (await store.stats()).feedback_events == 1


@pytest.mark.parametrize("taken_back", [False, True])
async def test_a_reaction_while_the_store_is_still_down_waits_behind_its_reply(
    store: SqliteStore, tmp_path: Path, taken_back: bool
) -> None:
    """The reply shows while the store is down and the person reacts at once (and perhaps takes it
    back): the reaction waits in the outbox behind the reply and its link, and reaches the store
    once they have (bench/soak.py's full disk lost one, answered "unknown")."""
    conv = conversation(store)
    with locked(tmp_path / "k.db"):
        done = await say(conv, "during the lock")
        await conv.link_reply("telegram", "telegram:1", ["77"], done, "ann")
        event = MessageReaction("telegram", "telegram:1", "77", "ann", "👍", T0)
        assert await conv.handle_message_reaction(event) == ReactionResult("recorded", 1.0)
        if taken_back:
            gone = MessageReaction("telegram", "telegram:1", "77", "ann", None, T0)
            assert await conv.handle_message_reaction(gone) == ReactionResult("removed")
        assert len(conv.outbox) == 4 + taken_back  # both turns, the link, the reaction(s)
    assert await conv.flush() == 4 + taken_back
    link = await store.turns.find_message("telegram", "telegram:1", "77")
    reply = [t for t in await store.turns.recent_turns("ann", "c1", 10) if t.role == "assistant"]
    assert link is not None and [t.id for t in reply] == [link.turn_id]
    assert (await store.stats()).feedback_events == (0 if taken_back else 1)


async def test_a_reply_the_outbox_wrote_before_its_link_is_linked_by_its_key(
    store: SqliteStore, tmp_path: Path
) -> None:
    conv = conversation(store)
    with locked(tmp_path / "k.db"):
        done = await say(conv, "during the lock")
    assert await conv.flush() == 2  # the person's turn and the reply, before the platform's id came
    await conv.link_reply("telegram", "telegram:1", ["77", "78"], done, "ann")
    reply = [t for t in await store.turns.recent_turns("ann", "c1", 10) if t.role == "assistant"]
    for message_id in ("77", "78"):
        link = await store.turns.find_message("telegram", "telegram:1", message_id)
        assert link is not None and link.turn_id == reply[0].id


async def test_a_link_to_a_reply_that_was_spilled_links_nothing(store: SqliteStore, tmp_path: Path) -> None:
    conv = conversation(store)
    with locked(tmp_path / "k.db"):
        done = await say(conv, "during the lock")
        await conv.link_reply("telegram", "telegram:1", ["77"], done, "ann")
        assert len(conv.outbox) == 3
        conv.outbox.spill(tmp_path / "unsaved", "t")  # the process exits with the store still locked
    await conv.link_reply("telegram", "telegram:1", ["78"], done, "ann")  # too late: nothing to link
    assert len(conv.outbox) == 0
    assert await store.turns.find_message("telegram", "telegram:1", "78") is None
    event = MessageReaction("telegram", "telegram:1", "77", "ann", "👍", T0)
    assert await conv.handle_message_reaction(event) == ReactionResult("unknown")


async def test_waiting_words_reach_the_store_when_it_is_back_though_nobody_writes_again(
    store: SqliteStore, tmp_path: Path
) -> None:
    conv = conversation(store)
    retrying = asyncio.create_task(keep_flushing(conv.outbox, store.turns, every_s=0.02))
    try:
        with locked(tmp_path / "k.db"):
            await say(conv, "during the lock")
            await asyncio.sleep(0.1)  # retried while locked: still waiting, nothing lost
            assert len(conv.outbox) == 2
        for _ in range(250):
            if not len(conv.outbox):
                break
            await asyncio.sleep(0.02)
    finally:
        retrying.cancel()
    assert len(conv.outbox) == 0
    assert [t.text for t in await store.turns.recent_turns("ann", "c1", 10)] == ["during the lock", "ok"]


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
