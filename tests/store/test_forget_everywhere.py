"""/forget all leaves nothing of the person in any table, on SQLite and on PostgreSQL, and what
is forgotten cannot be read back from SQLite's files; a NUL inside imported text is kept alike on
both stores.

The tables are read from the catalog (sqlite_master, information_schema), not from a list here,
so a table added later is checked too: each row of each is read as text and searched for the
person's id and their secret word. Two people fill every table (chats in a DM and a group,
reactions both ways, an import, extraction, an app, a training snapshot, a tool use, message
links, a reply whose delivery is unknown, consent); one forgets all, the other keeps everything."""

from __future__ import annotations

import sqlite3
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import Reaction, ReplyDone, UserMessage
from bot.core.learning.models import ExampleSnapshot
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.memory.jsonl_format import ImportItem, parse_line
from bot.core.memory.operations import import_items
from bot.core.memory.remember import remember_turn
from bot.core.miniapps.build import BuildRequest, build_app
from bot.core.models import DeliveryDoubt
from bot.core.store import Store
from bot.store.sqlite.store import SqliteStore
from bot.web.miniapps.render import TemplateRenderer
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.places import every_row, open_place

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
EMB = HashEmbedder()
SECRET = "My secret code is 4471 zebra"


async def _say(conv: Conversation, user: str, chat: str, text: str, at: datetime) -> ReplyDone:
    message = UserMessage(user, chat, text, at, private=not chat.startswith("group"))
    events = [event async for event in conv.handle_message(message)]
    assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None
    return events[-1]


async def fill(store: Store, user: str, word: str, other_reply: int | None) -> int:
    """Everything a person can leave behind, each thing carrying `word`; returns their group reply."""
    policy = ConversationPolicy(persona="p", recent_turns=4, memory_top_k=8, reactions=DEFAULT_REACTIONS)
    conv = Conversation(store, EMB, ScriptedInference(f"Noted, {word}."), policy)
    first = await _say(conv, user, f"dm-{user}", f"I live in Lisbon and my cat is called {word}", T0)
    reply = await _say(conv, user, "group-1", f"my favourite word is {word}", T0 + timedelta(minutes=1))
    await conv.handle_reaction(Reaction(user, first.turn_id or 0, "❤️", T0 + timedelta(minutes=2)))
    if other_reply is not None:  # a reaction to the other person's reply in the group
        await conv.handle_reaction(Reaction(user, other_reply, "👍", T0 + timedelta(minutes=2)))
    await conv.link_reply("telegram", "group-1", [f"{word}-m1"], reply, user)
    await store.deliveries.record(DeliveryDoubt("telegram", f"group-{word}", reply.turn_id or 0, user))
    turns = await store.turns.recent_turns(user, f"dm-{user}", 4)
    said = next(t for t in turns if t.role == "user")
    await remember_turn(store, EMB, user, said.memory_id or 0, T0 + timedelta(minutes=3))
    items = [ImportItem(1, f"{SECRET} {word}", "Caroline", T0), ImportItem(2, "Wow, nice!", "Melanie", T0)]
    await import_items(store.memories, EMB, user, items)
    await store.learning.set_training_consent(user, False)
    await store.rewards.record_signal(reply.turn_id or 0, "tool_use", f"{word}-use", T0)
    memories = [m.text for m in await store.memories.list_memories(user, 100)]
    request = BuildRequest(f"{word}-build", user, f"dm-{user}", f"a packing list for {word}")
    await build_app(store.miniapps, TemplateRenderer(), request, memories, T0)
    run = await store.adapters.start_run(f"night-{uuid.uuid4().hex}", T0, timedelta(hours=1))
    assert run is not None
    parts = {"reaction": 1.0}
    await store.learning.record_examples(
        run.id, [ExampleSnapshot(first.turn_id or 0, user, "desirable", "train", 1, parts)]
    )
    await store.adapters.finish_run(run.id, "skipped", "test", T0)
    return reply.turn_id or 0


def holding(rows: dict[str, list[str]], *needles: str) -> dict[str, list[str]]:
    return {name: found for name, values in rows.items()
            if (found := [row for row in values if any(n in row for n in needles)])}  # fmt: skip


async def test_forget_all_leaves_the_person_in_no_table_and_no_index(place: str) -> None:
    run = uuid.uuid4().hex[:8]
    ann, bob = f"telegram:ann{run}", f"telegram:bob{run}"
    ann_word, bob_word = f"annword{run}", f"bobword{run}"
    store = await open_place(place)
    try:
        bob_reply = await fill(store, bob, bob_word, None)
        await fill(store, ann, ann_word, bob_reply)
        before = holding(await every_row(place), ann, ann_word)
        # The person really is in every kind of table before (so the check below can fail).
        for table in ("users", "turns", "memories", "feedback", "generations", "apps", "app_versions",
                      "app_builds", "platform_messages", "training_examples", "usage_records"):  # fmt: skip
            assert table in before, f"the fill left nothing of the person in {table}"
        forgotten = await store.memories.forget_all(ann)
        assert forgotten >= 4
        left = holding(await every_row(place), ann, ann_word)
        assert left == {}, f"forget all left the person in: {left}"
        assert (
            await store.memories.list_memories(ann, 10) == []
            and await store.miniapps.list_apps(ann, 10) == []
        )
        assert await store.memories.lexical_search(ann, [ann_word, "lisbon"], 10) == []
        assert await store.memories.dense_search(ann, EMB.vector(f"cat {ann_word}"), 10) == []
        # The other person keeps everything, their reply's reaction from the forgotten one aside.
        kept = holding(await every_row(place), bob, bob_word)
        for table in (
            "users",
            "turns",
            "memories",
            "generations",
            "apps",
            "app_versions",
            "training_examples",
        ):
            assert table in kept, f"the other person lost their {table}"
        assert [hit.memory.text for hit in await store.memories.lexical_search(bob, [bob_word], 10)]
        # Coming back is starting afresh, and the search finds only the new words.
        policy = ConversationPolicy(persona="p", recent_turns=4, memory_top_k=8, reactions=DEFAULT_REACTIONS)
        model = ScriptedInference("Hello again.")
        await _say(Conversation(store, EMB, model, policy), ann, f"dm-{ann}", f"hi, is {ann_word} there?", T0)
        assert ann_word not in "\n".join(m.content for m in model.prompts[-1][:-1])
    finally:
        await store.close()


_VACUUMS_SQL = "SELECT relname, vacuum_count FROM pg_stat_user_tables"


@pytest.mark.pg
async def test_postgres_vacuums_the_tables_forget_all_touched(pg_dsn: str) -> None:
    """VACUUM (not autovacuum: its count is apart) ran on every table the forget deleted from, so
    the dead rows' space is marked free at once (docs/memory.md says what stays on disk)."""
    import psycopg

    from bot.store.sql.statements import FORGOTTEN_TABLES

    store = await open_place(pg_dsn)
    try:
        await fill(store, "telegram:1", "vacuumword", None)
        async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
            before: dict[str, int] = dict(await (await conn.execute(_VACUUMS_SQL)).fetchall())
        await store.memories.forget_all("telegram:1")
    finally:
        await store.close()
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        after: dict[str, int] = dict(await (await conn.execute(_VACUUMS_SQL)).fetchall())
    assert {name: after[name] - before[name] for name in FORGOTTEN_TABLES} == dict.fromkeys(
        FORGOTTEN_TABLES, 1
    )


def _raw(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())


async def _secret_store(path: Path) -> tuple[SqliteStore, list[int]]:
    store = await SqliteStore.open(path)
    # Enough of the person and of someone else that the file and the index have pages to spare.
    others = [ImportItem(n, f"I walked the dog on day {n} along the river", "user", T0) for n in range(200)]
    await import_items(store.memories, EMB, "telegram:2", others)
    items = [ImportItem(1, "I like green tea in the morning", "Caroline", T0),
             ImportItem(2, SECRET, "Caroline", T0), ImportItem(3, "Wow, nice!", "Melanie", T0)]  # fmt: skip
    ids = await import_items(store.memories, EMB, "telegram:1", items + others[:50])
    await store.maintain()  # some of it checkpointed into the file, some still in the WAL
    await import_items(store.memories, EMB, "telegram:1", [ImportItem(9, "another line", "user", T0)])
    assert b"4471" in _raw(path) and b"zebra" in _raw(path)
    return store, ids


@pytest.mark.parametrize("how", ["forget all", "forget one"])
async def test_forgotten_words_cannot_be_read_from_the_sqlite_files(tmp_path: Path, how: str) -> None:
    path = tmp_path / "kindred.db"
    store, ids = await _secret_store(path)
    try:
        with sqlite3.connect(path) as conn:  # the short reply after it is searched with its words
            [(context,)] = conn.execute("SELECT context FROM memories WHERE id = ?", (ids[2],))
        assert "4471" in context
        if how == "forget all":
            await store.memories.forget_all("telegram:1")
        else:
            assert await store.memories.forget("telegram:1", ids[1])
            left = [m.text for m in await store.memories.list_memories("telegram:1", 500)]
            assert "Wow, nice!" in left and "I like green tea in the morning" in left and SECRET not in left
            assert await store.memories.lexical_search("telegram:1", ["wow"], 5)
        raw = _raw(path)
        assert b"4471" not in raw and b"zebra" not in raw, (
            f"the forgotten words are still in the files ({how})"
        )
        assert len(await store.memories.lexical_search("telegram:2", ["river"], 500)) == 200
    finally:
        await store.close()


async def test_a_nul_or_lone_surrogate_in_imported_text_is_stored_alike_on_both(place: str) -> None:
    line = (
        r'{"text": "tea\u0000 time", "speaker": "Ann\u0000ie", "meta": {"k\u0000": ["a\u0000b", "\ud800"]}}'
    )
    item = parse_line(1, line)
    store = await open_place(place)
    try:
        [stored_id] = await import_items(store.memories, EMB, "telegram:1", [item])
        [stored] = await store.curation.get_memories("telegram:1", [stored_id])
    finally:
        await store.close()
    assert (stored.text, stored.speaker) == ("tea time", "Annie")
    assert stored.meta == {"k": ["ab", "?"]}  # as clean_message replaces one in the text


async def test_forgetting_an_imported_line_takes_the_summary_that_quotes_it(any_store: Store) -> None:
    """Found by the isolation property test: a summary links turns, and an imported line has none;
    it is found by the ids the summary covers."""
    from bot.core.memory.consolidation import ConsolidationPolicy, consolidate

    later = T0 + timedelta(minutes=1)
    items = [ImportItem(1, "My secret code is 4471 zebra and I keep it safe", "user", T0),
             ImportItem(2, "I also like long walks by the river", "user", later)]  # fmt: skip
    ids = await import_items(any_store.memories, EMB, "telegram:1", items)
    done = await consolidate(
        any_store, EMB, "telegram:1", T0 + timedelta(days=1), ConsolidationPolicy(older_than=timedelta(0))
    )
    assert done.summaries == 1
    assert await any_store.memories.forget("telegram:1", ids[0])
    left = await any_store.memories.list_memories("telegram:1", 10)
    assert [m.text for m in left] == [items[1].text]
