"""The PostgreSQL server goes away mid-conversation and comes back: the person keeps getting
answers, and every turn and reaction reaches the database once it is back, in order."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.chat.conversation import STORE_DOWN_NOTICE, Conversation, ConversationPolicy
from bot.core.events import Reaction, ReplyDone
from bot.store.postgres.store import PostgresStore
from tests.support.fakes import HashEmbedder, ScriptedInference, reply_done
from tests.support.pg import PgServer, fresh_database

pytestmark = pytest.mark.pg
T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


async def say(conv: Conversation, text: str) -> ReplyDone:
    return await reply_done(conv, text, at=T0)


async def test_a_vanished_server_costs_nothing(pg_server: PgServer) -> None:
    if not pg_server.restartable:
        pytest.skip("TEST_DATABASE_URL names a server this test cannot stop and start")
    store = await PostgresStore.open(await fresh_database(pg_server), timeout_s=2.0)
    conv = Conversation(
        store,
        HashEmbedder(),
        ScriptedInference("ok"),
        ConversationPolicy(persona="p", reactions={"👍": 1.0}),
    )
    try:
        first = await say(conv, "before the outage")
        assert first.turn_id is not None
        pg_server.stop()
        try:
            during = await say(conv, "while the server is gone")
            assert during.turn_id is None and during.notice == STORE_DOWN_NOTICE and during.text == "ok"
            await conv.handle_reaction(Reaction("ann", first.turn_id, "👍", T0))
            assert len(conv.outbox) == 3
        finally:
            pg_server.start()
        after = await say(conv, "after it came back")
        assert after.turn_id is not None and after.notice is None
        assert len(conv.outbox) == 0
        turns = await store.turns.recent_turns("ann", "c1", 20)
        assert [t.text for t in turns if t.role == "user"] == [
            "before the outage",
            "while the server is gone",
            "after it came back",
        ]
        assert len(turns) == 6
        assert (await store.stats()).feedback_events == 1
    finally:
        await store.close()
