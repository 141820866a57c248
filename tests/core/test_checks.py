"""External checks (core/memory/checks.py): `EventDatePassed` on its own, and `run_checks` on a real store,
SQLite and PostgreSQL + pgvector. Similarity plays no part here, so the hashed embedder will do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.memory.checks import EventDatePassed, Verdict, run_checks
from bot.core.models import Memory, NewMemory
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()
SAID = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
EXAM_DAY = datetime(2026, 3, 5, 0, 0, tzinfo=UTC)


def event(meta: dict[str, object], *, kind: str = "event", status: str = "active") -> Memory:
    return Memory(1, "ann", kind, "My exam is on Thursday", "user", SAID, "m", meta, status=status)


async def test_an_event_is_past_only_once_its_day_is_over() -> None:
    check, exam = EventDatePassed(), event({"event_date": "2026-03-05"})
    assert await check.check(exam, EXAM_DAY - timedelta(days=1)) is None
    assert await check.check(exam, EXAM_DAY) is None, "on the day it is not past yet"
    assert await check.check(exam, EXAM_DAY + timedelta(hours=23, minutes=59)) is None
    verdict = await check.check(exam, EXAM_DAY + timedelta(days=1))
    assert verdict is not None and verdict.status == "past" and verdict.verification is None
    assert "2026-03-05" in verdict.note


async def test_what_is_no_dated_active_event_is_ignored() -> None:
    check, late = EventDatePassed(), EXAM_DAY + timedelta(days=30)
    for memory in (
        event({"event_date": "2026-03-05"}, kind="fact"),
        event({"event_date": "2026-03-05"}, status="past"),
        event({"event_date": "2026-03-05"}, status="superseded"),
        event({}),
        event({"event_date": "2026-02-31"}),
        event({"event_date": "next Thursday"}),
        event({"event_date": 20260305}),
        event({"event_date": None}),
    ):
        assert await check.check(memory, late) is None, memory


async def remember(store: Store, user: str, text: str, kind: str, meta: dict[str, object]) -> int:
    new = NewMemory(user, text, "user", SAID, EMB.vector(text), EMB.model_name, kind, meta)
    (memory_id,) = await store.memories.add_memories([new])
    return memory_id


async def test_run_checks_marks_past_events_of_one_person(any_store: Store) -> None:
    exam = await remember(any_store, "ann", "My exam is on Thursday", "event", {"event_date": "2026-03-05"})
    trip = await remember(any_store, "ann", "My trip is in May", "event", {"event_date": "2026-05-10"})
    fact = await remember(any_store, "ann", "I was born on 5 March", "fact", {"event_date": "2026-03-05"})
    bad = await remember(any_store, "ann", "Party on 31 February", "event", {"event_date": "2026-02-31"})
    undated = await remember(any_store, "ann", "The gig was great", "event", {})
    bobs = await remember(any_store, "bob", "My exam is on Thursday", "event", {"event_date": "2026-03-05"})
    now = EXAM_DAY + timedelta(days=1, hours=3)

    assert await run_checks(any_store, "ann", now) == {"event_date_passed": 1}
    found = {m.id: m for m in await any_store.curation.get_memories("ann", [exam, trip, fact, bad, undated])}
    assert (found[exam].status, found[exam].updated_at) == ("past", now)
    assert [found[i].status for i in (trip, fact, bad, undated)] == ["active"] * 4
    [bob] = await any_store.curation.get_memories("bob", [bobs])
    assert bob.status == "active", "one person's run touches only their memories"
    hits = await any_store.memories.dense_search("ann", EMB.vector("My exam is on Thursday"), 3)
    assert hits[0].memory.id == exam, "a past event is still recalled"
    assert await run_checks(any_store, "ann", now) == {"event_date_passed": 0}, "once is enough"
    assert await run_checks(any_store, "nobody", now) == {"event_date_passed": 0}


class ClosedPlaces:
    """A check from outside: it knows Luigi's has closed."""

    name = "closed_places"

    async def check(self, memory: Memory, now: datetime) -> Verdict | None:
        return Verdict(verification=-1.0, note="closed") if "Luigi" in memory.text else None


async def test_any_check_plugs_into_the_same_hook(any_store: Store) -> None:
    luigi = await remember(any_store, "ann", "I love Luigi's pizza", "preference", {})
    other = await remember(any_store, "ann", "I love green tea", "preference", {})
    checks = (EventDatePassed(), ClosedPlaces())
    assert await run_checks(any_store, "ann", SAID, checks) == {"event_date_passed": 0, "closed_places": 1}
    found = {m.id: m for m in await any_store.curation.get_memories("ann", [luigi, other])}
    assert (found[luigi].verification, found[luigi].status) == (-1.0, "active")
    assert found[other].verification == 0.0
