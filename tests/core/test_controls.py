"""The platform-free person controls, rate limiter and access policy, on a real SQLite store."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.chat.access import Access
from bot.core.chat.ratelimit import RateLimiter, slow_down
from bot.core.memory.controls import Controls, age
from bot.core.memory.jsonl_format import parse_lines
from bot.core.models import NewMemory, NewTurn, Revision
from bot.shared_state.local_buckets import LocalBuckets
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


async def remember(store: SqliteStore, user: str, count: int) -> list[int]:
    return await store.memories.add_memories(
        [
            NewMemory(
                user, f"fact number {n}", "user", NOW - timedelta(hours=count - n), EMB.vector(str(n)), "h"
            )
            for n in range(count)
        ]
    )


async def test_memory_pages_run_newest_first_and_know_their_neighbours(store: SqliteStore) -> None:
    ids = await remember(store, "ann", 12)
    controls = Controls(store, "persona", page_size=5, clock=lambda: NOW)
    first = await controls.memories_page("ann", 1)
    assert [m.id for m in first.memories] == ids[::-1][:5]
    assert first.has_next and not first.has_previous
    last = await controls.memories_page("ann", 3)
    assert [m.id for m in last.memories] == ids[1::-1]
    assert not last.has_next and last.has_previous
    assert f"#{ids[-1]} · turn · 1 h ago · fact number 11" in first.render()
    assert (await controls.memories_page("ann", 9)).render() == "No more memories."
    assert "don't remember anything" in (await controls.memories_page("bob", 1)).render()


async def test_forget_one_answers_every_kind_of_argument(store: SqliteStore) -> None:
    ids = await remember(store, "ann", 2)
    await remember(store, "bob", 1)
    controls = Controls(store, "persona")
    assert "Forgotten" in await controls.forget_one("ann", f"#{ids[0]}")
    assert "no memory" in await controls.forget_one("ann", str(ids[0]))
    bobs = (await store.memories.list_memories("bob", 5))[0].id
    assert "no memory" in await controls.forget_one("ann", str(bobs)), "never another person's memory"
    for bad in ("", "abc", "-3", "1; DROP TABLE memories"):
        assert "/forget ID" in await controls.forget_one("ann", bad)
    assert await store.memories.memory_count("ann") == 1 and await store.memories.memory_count("bob") == 1


async def test_export_round_trips_through_import(store: SqliteStore) -> None:
    await remember(store, "ann", 3)
    data = await Controls(store, "p").export_jsonl("ann")
    parsed = parse_lines(data.splitlines(keepends=True))
    assert not parsed.errors and [item.text for item in parsed.items] == [
        f"fact number {n}" for n in range(3)
    ]
    assert all("id" in json.loads(line) for line in data.splitlines())
    assert await Controls(store, "p").export_jsonl("nobody") == b""


async def test_forget_all_and_unreachable(store: SqliteStore) -> None:
    await remember(store, "ann", 4)
    controls = Controls(store, "p")
    assert "(4 memories)" in await controls.forget_all("ann")
    await controls.mark_unreachable("ann")
    assert not await store.turns.is_user_active("ann")


def test_ages_read_naturally() -> None:
    assert age(NOW, NOW) == "just now"
    assert age(NOW - timedelta(minutes=3), NOW) == "3 min ago"
    assert age(NOW - timedelta(days=40), NOW) == "40 d ago"
    assert age(NOW + timedelta(minutes=3), NOW) == "just now"


async def test_rate_limiter_allows_a_burst_then_paces() -> None:
    now = [0.0]
    limiter = RateLimiter(per_minute=6, burst=3, buckets=LocalBuckets(clock=lambda: now[0]))
    assert [await limiter.take("ann") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert await limiter.take("ann") == pytest.approx(10.0)
    assert await limiter.take("bob") == 0.0, "each person has their own allowance"
    now[0] = 10.0
    assert await limiter.take("ann") == 0.0
    assert "10 s" in slow_down(9.2)
    off = RateLimiter(per_minute=0, burst=1, buckets=LocalBuckets())
    assert await off.take("x") == 0.0, "0 turns limiting off"


def test_access_lists_people_places_and_admins() -> None:
    open_to_all = Access()
    assert open_to_all.may_talk("telegram:1")
    private = Access(frozenset({"telegram:1", "telegram-chat:-100"}), frozenset({"discord:9"}))
    assert private.may_talk("telegram:1")
    assert private.may_talk("telegram:2", "telegram-chat:-100")
    assert not private.may_talk("telegram:2", "telegram-chat:-200")
    assert private.may_talk("discord:9") and private.is_admin("discord:9")
    assert not private.is_admin("telegram:1")


async def test_confirm_marks_a_memory_verified(store: SqliteStore) -> None:
    ids = await remember(store, "ann", 2)
    [bobs] = await remember(store, "bob", 1)
    controls = Controls(store, "persona", clock=lambda: NOW)
    assert f"memory #{ids[0]} is confirmed" in await controls.confirm("ann", f"#{ids[0]}")
    [confirmed, other] = await store.curation.get_memories("ann", ids)
    assert (confirmed.verification, confirmed.updated_at, other.verification) == (1.0, NOW, 0.0)
    assert "[confirmed]" in (await controls.memories_page("ann", 1)).render()
    assert "confirmed" in await controls.confirm("ann", str(ids[0])), "confirming twice is fine"
    assert "no memory" in await controls.confirm("ann", str(bobs)), "never another person's memory"
    assert (await store.curation.get_memories("bob", [bobs]))[0].verification == 0.0
    assert "no memory #999999" in await controls.confirm("ann", "999999")
    for bad in ("", "abc", "-3", "#", "1.5", "²", "1" * 40):
        assert "/confirm ID" in await controls.confirm("ann", bad), bad


async def test_correct_replaces_a_memory_with_a_confirmed_one(store: SqliteStore) -> None:
    old_text = "I live in Lisbon with my two cats"
    (old,) = await store.memories.add_memories(
        [
            NewMemory(
                "ann",
                old_text,
                "user",
                NOW - timedelta(days=3),
                EMB.vector(old_text),
                "h",
                "fact",
                {"chat_id": "c1"},
            )
        ]
    )
    later = NOW + timedelta(hours=1)
    controls = Controls(store, "persona", clock=lambda: later, embedder=EMB)

    answer = await controls.correct("ann", f"#{old}   I live in   Berlin with my two cats")

    [new] = [m for m in await store.memories.list_memories("ann", 10) if m.id != old]
    said = "I live in Berlin with my two cats"
    assert answer == f"Corrected: #{new.id} now says “{said}”, and #{old} will not come up again."
    assert (new.text, new.kind, new.speaker, new.verification) == (
        "I live in Berlin with my two cats", "fact", "user", 1.0,
    )  # fmt: skip
    assert new.meta == {"chat_id": "c1", "corrects": old} and new.created_at == later
    [replaced] = await store.curation.get_memories("ann", [old])
    assert (replaced.status, replaced.superseded_by, replaced.text) == ("superseded", new.id, old_text)
    dense = [h.memory.id for h in await store.memories.dense_search("ann", EMB.vector(old_text), 10)]
    assert dense == [new.id], "the old one is out of dense search"
    assert [h.memory.id for h in await store.memories.lexical_search("ann", ["lisbon"], 10)] == []
    assert [h.memory.id for h in await store.memories.lexical_search("ann", ["berlin"], 10)] == [new.id]
    assert f"[replaced by #{new.id}]" in (await controls.memories_page("ann", 1)).render()


async def test_correct_answers_every_kind_of_bad_argument(store: SqliteStore) -> None:
    [mine] = await remember(store, "ann", 1)
    [bobs] = await remember(store, "bob", 1)
    controls = Controls(store, "persona", embedder=EMB)
    for bad in ("", "abc", "abc new text", f"{mine}", f"#{mine}   ", "-3 new text", "  "):
        assert "/correct ID new text" in await controls.correct("ann", bad), bad
    too_long = await controls.correct("ann", f"{mine} " + "x" * 501)
    assert "under 500 characters" in too_long
    assert "Corrected" in await controls.correct("ann", f"{mine} " + "y" * 500), "500 is allowed"
    assert "no memory" in await controls.correct("ann", f"{bobs} I am Bob now")
    assert "no memory #999999" in await controls.correct("ann", "999999 new text")
    [bob] = await store.memories.list_memories("bob", 5)
    assert (bob.text, bob.status) == ("fact number 0", "active"), "another person's memory is untouched"
    [other] = await remember(store, "cy", 1)
    no_embedder = await Controls(store, "persona").correct("cy", f"{other} new text")
    assert "can't take corrections" in no_embedder
    assert (await store.curation.get_memories("cy", [other]))[0].status == "active"


async def test_a_correction_keeps_the_pin_and_the_sources(store: SqliteStore) -> None:
    turn = await store.turns.add_turn(
        NewTurn(
            "ann",
            "c1",
            "user",
            "my locker is 12",
            EMB.vector("my locker is 12"),
            "h",
            NOW,
            memory_kind="fact",
        )
    )
    assert await store.curation.revise_memory("ann", turn.memory_id, Revision(pinned=True))
    controls = Controls(store, "persona", clock=lambda: NOW, embedder=EMB)
    assert "Corrected" in await controls.correct("ann", f"{turn.memory_id} my locker is 21")
    [new] = [m for m in await store.memories.list_memories("ann", 10) if m.id != turn.memory_id]
    assert new.pinned and new.verification == 1.0
    assert await store.curation.memory_sources(new.id) == [turn.id]
