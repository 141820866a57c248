"""Consolidation (core/memory/consolidation.py) on a real store, SQLite and PostgreSQL + pgvector: old
sessions become summaries, the turns a summary says in full are archived (the bot's replies, a
one-exchange session's turn), and a budget archives the oldest of the rest.
Which memory is near which plays no part, so the hashed embedder will do."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from bot.core.memory.consolidation import ConsolidationPolicy, consolidate, sessions, summary_text
from bot.core.memory.kinds import classify
from bot.core.models import DOCUMENT, Feedback, Memory, NewMemory, NewTurn, Revision, Turn
from bot.core.store import Store
from bot.core.text import query_terms
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()
T0 = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=30)
USER = "ann"
POLICY = ConsolidationPolicy(older_than=timedelta(days=14), session_gap=timedelta(minutes=30))


@dataclass
class History:
    """The turns of a few sessions, by name, as the conversation would have stored them."""

    store: Store
    turns: dict[str, list[Turn]] = field(default_factory=dict)

    async def session(self, name: str, start: datetime, lines: list[str], *, chat: str = "c1") -> list[Turn]:
        stored: list[Turn] = []
        for n, text in enumerate(lines):
            role: Literal["user", "assistant"] = "user" if n % 2 == 0 else "assistant"
            kind = classify(text) if role == "user" else "turn"
            new = NewTurn(
                USER, chat, role, text, EMB.vector(text), EMB.model_name, start + timedelta(minutes=5 * n),
                meta={"chat_id": chat}, memory_kind=kind,
            )  # fmt: skip
            stored.append(await self.store.turns.add_turn(new))
        self.turns[name] = stored
        return stored

    def memory_ids(self, name: str) -> list[int]:
        return [turn.memory_id for turn in self.turns[name]]

    async def memories(self, name: str) -> list[Memory]:
        return await self.store.curation.get_memories(USER, self.memory_ids(name))

    async def summaries(self) -> list[Memory]:
        return [m for m in await self.store.memories.list_memories(USER, 1000) if m.kind == "summary"]


MORNING = [
    "I spent the morning repairing my old bicycle.",
    "That sounds satisfying!",
    "The chain was rusted, so I replaced it. Then I oiled the gears.",
    "Nice work.",
]
EVENING = ["We cooked dumplings with my cousin", "Yum!", "They came out a bit lopsided"]
OTHER_CHAT = ["In the group chat we planned a picnic", "Great idea", "Saturday at the lake"]


async def old_history(store: Store) -> History:
    history = History(store)
    await history.session("morning", T0, MORNING)
    await history.session("evening", T0 + timedelta(hours=8), EVENING)
    await history.session("brief", T0 + timedelta(days=1), ["ok", "Sure."])  # too short for a summary
    await history.session("group", T0 + timedelta(minutes=1), OTHER_CHAT, chat="g1")
    await history.session("statement", T0 + timedelta(hours=8, minutes=1), ["I love green tea"])
    await history.session("recent", NOW - timedelta(days=2), ["I went for a run", "Well done!", "Thanks"])
    return history


async def test_each_old_session_gets_one_summary_linked_to_the_turns_it_covers(any_store: Store) -> None:
    history = await old_history(any_store)
    pinned = (await history.session("pinned", T0 + timedelta(hours=8, minutes=2), ["keep this one please"]))[
        0
    ]
    assert await any_store.curation.revise_memory(USER, pinned.memory_id, Revision(pinned=True))

    before = await recallable_count(any_store)
    done = await consolidate(any_store, EMB, USER, NOW, POLICY)

    # The 4 replies the summaries cover are archived; 3 summaries join the person's covered turns.
    assert (done.summaries, done.covered, done.archived) == (3, 10, 4)
    assert done.as_payload() == {"summaries": 3, "covered": 10, "archived": 4}
    assert await recallable_count(any_store) == before - 4 + 3
    summaries = await history.summaries()
    by_covers = {tuple(s.meta["covers"]): s for s in summaries}
    assert set(by_covers) == {tuple(history.memory_ids(name)) for name in ("morning", "evening", "group")}
    for name in ("morning", "evening", "group"):
        summary = by_covers[tuple(history.memory_ids(name))]
        turns = history.turns[name]
        assert summary.speaker is None and summary.recallable and summary.weight == 1.0
        assert summary.created_at == turns[-1].created_at
        assert summary.meta["chat_id"] == turns[0].chat_id
        assert summary.text.startswith(f"{turns[0].created_at:%Y-%m-%d}: ")
        assert await any_store.curation.memory_sources(summary.id) == [turn.id for turn in turns]
        covered = await history.memories(name)
        assert all(m.weight == POLICY.covered_weight and m.meta["covered_by"] == summary.id for m in covered)
        expected = ["active" if m.speaker == "user" else "archived" for m in covered]
        assert [m.status for m in covered] == expected
    morning = by_covers[tuple(history.memory_ids("morning"))].text
    assert "repairing my old bicycle" in morning and "replaced it" in morning
    assert "satisfying" not in morning, "only the person's own words"

    for untouched in ("brief", "recent", "statement", "pinned"):
        assert [m.weight for m in await history.memories(untouched)] != [], untouched
        assert all(m.weight == 1.0 and m.status == "active" for m in await history.memories(untouched))
    [statement] = await history.memories("statement")
    assert statement.kind == "preference"
    hits = await any_store.memories.lexical_search(USER, query_terms("bicycle chain"), 10)
    assert {h.memory.id for h in hits} >= {by_covers[tuple(history.memory_ids("morning"))].id}
    assert {h.memory.id for h in hits} & set(history.memory_ids("morning")), "the person's turns stay"


async def recallable_count(store: Store) -> int:
    return sum(m.recallable for m in await store.memories.list_memories(USER, 1000))


async def test_one_exchange_is_a_session_but_ok_is_not_worth_a_summary(any_store: Store) -> None:
    history = History(any_store)
    walk = "Spent the afternoon walking along the river with the dog"
    await history.session("one", T0, [walk, "How lovely!"])
    await history.session("ok", T0 + timedelta(days=1), ["ok", "Sure."])

    done = await consolidate(any_store, EMB, USER, NOW, POLICY)

    [summary] = await history.summaries()
    assert (done.summaries, done.archived) == (1, 2)
    assert summary.text == f"2026-02-02: {walk}"
    assert all(m.status == "archived" for m in await history.memories("one"))
    assert all(m.status == "active" and m.weight == 1.0 for m in await history.memories("ok"))


async def test_running_twice_summarises_nothing_again(any_store: Store) -> None:
    await old_history(any_store)
    first = await consolidate(any_store, EMB, USER, NOW, POLICY)
    count = await any_store.memories.memory_count(USER)
    again = await consolidate(any_store, EMB, USER, NOW + timedelta(hours=1), POLICY)
    assert first.summaries == 3 and (again.summaries, again.covered, again.archived) == (0, 0, 0)
    assert await any_store.memories.memory_count(USER) == count
    assert (await consolidate(any_store, EMB, "nobody", NOW, POLICY)).summaries == 0


async def test_over_budget_the_oldest_covered_turns_are_archived_but_not_rewarded_ones(
    any_store: Store,
) -> None:
    history = await old_history(any_store)
    # The morning's first turn earned a ❤️: a reply that used it was loved.
    oldest = history.turns["morning"][0]
    reply = await any_store.turns.add_turn(
        NewTurn(
            USER, "c1", "assistant", "You fixed your bicycle!", EMB.vector("bicycle"), EMB.model_name,
            NOW - timedelta(days=20), used_memory_ids=(oldest.memory_id,), memory_shares=(1.0,),
            meta={"chat_id": "c1"},
        )
    )  # fmt: skip
    await any_store.turns.record_feedback(Feedback(reply.id, USER, "❤️", 2.0, NOW - timedelta(days=20)))
    assert (await any_store.rewards.memory_rewards(USER, [oldest.memory_id]))[oldest.memory_id] > 0
    # A summary too short for any whole sentence of the person's: only the 4 replies it covers are
    # said in full (the summary keeps none of the bot's words). After the 3 summaries and those 4,
    # there are this many recallable memories; the budget is 3 fewer.
    recallable = await any_store.memories.memory_count(USER) + 3
    policy = ConsolidationPolicy(older_than=POLICY.older_than, summary_chars=24, budget=recallable - 4 - 3)

    done = await consolidate(any_store, EMB, USER, NOW, policy)

    assert (done.summaries, done.archived) == (3, 4 + 3)
    morning = await history.memories("morning")
    group = await history.memories("group")
    evening = await history.memories("evening")
    assert morning[0].status == "active", "the rewarded turn is kept"
    replies = [m for m in morning + group + evening if m.speaker == "assistant"]
    assert len(replies) == 4 and all(m.status == "archived" for m in replies)
    # Then oldest first among the person's covered turns, the rewarded 10:00 one skipped: the group
    # chat's 10:01, the morning's 10:10 and the group chat's 10:11.
    archived = {m.id for m in morning + group if m.status == "archived" and m.speaker == "user"}
    assert archived == {group[0].id, morning[2].id, group[2].id}
    assert all(m.updated_at == NOW for m in morning + group if m.id in archived)
    found = set()
    for memory in morning + group:
        found |= {
            h.memory.id for h in await any_store.memories.dense_search(USER, EMB.vector(memory.text), 40)
        }
        found |= {
            h.memory.id for h in await any_store.memories.lexical_search(USER, query_terms(memory.text), 40)
        }
    assert not found & archived, "archived memories are never recalled"
    assert len(await any_store.memories.list_memories(USER, 1000)) == recallable, "but kept for /export"
    for untouched in ("brief", "recent", "statement"):
        assert all(m.status == "active" for m in await history.memories(untouched))
    assert (await consolidate(any_store, EMB, USER, NOW, policy)).archived == 0, "within budget now"


async def test_a_rewarded_turn_is_never_archived_even_when_said_in_full(any_store: Store) -> None:
    history = History(any_store)
    [told, _] = await history.session("one", T0, ["Spent the afternoon walking along the river", "Lovely!"])
    reply = await any_store.turns.add_turn(
        NewTurn(
            USER, "c1", "assistant", "A river walk!", EMB.vector("river"), EMB.model_name,
            T0 + timedelta(days=1), used_memory_ids=(told.memory_id,), memory_shares=(1.0,),
            meta={"chat_id": "c1"},
        )
    )  # fmt: skip
    await any_store.turns.record_feedback(Feedback(reply.id, USER, "❤️", 2.0, T0 + timedelta(days=1)))
    done = await consolidate(any_store, EMB, USER, NOW, POLICY)
    [first, answer] = await history.memories("one")
    assert (first.status, answer.status) == ("active", "archived"), "the rewarded turn is kept"
    assert done.archived == 1


async def test_a_tiny_budget_archives_only_covered_turns(any_store: Store) -> None:
    history = await old_history(any_store)
    policy = ConsolidationPolicy(older_than=POLICY.older_than, budget=1)
    done = await consolidate(any_store, EMB, USER, NOW, policy)
    assert done.archived == 10, "every covered turn, and nothing else"
    for name in ("brief", "recent", "statement"):
        assert all(m.status == "active" for m in await history.memories(name))
    assert all(s.recallable for s in await history.summaries())


async def test_a_later_run_over_budget_archives_turns_an_earlier_run_covered(any_store: Store) -> None:
    history = await old_history(any_store)
    first = await consolidate(any_store, EMB, USER, NOW, POLICY)
    assert first.archived == 4
    later = ConsolidationPolicy(older_than=POLICY.older_than, budget=1)
    again = await consolidate(any_store, EMB, USER, NOW + timedelta(days=1), later)
    assert (again.summaries, again.archived) == (0, 6), "the person's 6 covered turns"
    for name in ("brief", "recent", "statement"):
        assert all(m.status == "active" for m in await history.memories(name))


async def test_passages_of_shared_files_do_not_count_towards_the_budget(any_store: Store) -> None:
    """Files have a limit of their own: a long PDF must not push what the person said out of recall."""
    await old_history(any_store)
    await consolidate(any_store, EMB, USER, NOW, POLICY)
    said = sum(1 for m in await any_store.memories.list_memories(USER, 1000) if m.recallable)
    passages = [f"Page {n} of the tenancy agreement: the deposit is held by the scheme." for n in range(40)]
    await any_store.memories.add_memories([
        NewMemory(USER, text, None, NOW, EMB.vector(text), EMB.model_name, DOCUMENT, {"file": "lease.pdf"})
        for text in passages
    ])  # fmt: skip
    within = ConsolidationPolicy(older_than=POLICY.older_than, budget=said)
    assert (await consolidate(any_store, EMB, USER, NOW + timedelta(days=1), within)).archived == 0
    over = ConsolidationPolicy(older_than=POLICY.older_than, budget=said - 1)
    assert (await consolidate(any_store, EMB, USER, NOW + timedelta(days=1), over)).archived == 1


def memory(memory_id: int, text: str, minutes: int, *, chat: str = "c1", speaker: str = "user") -> Memory:
    at = T0 + timedelta(minutes=minutes)
    return Memory(memory_id, USER, "turn", text, speaker, at, "m", {"chat_id": chat})


def test_sessions_split_by_chat_and_by_pauses() -> None:
    found = sessions(
        [
            memory(3, "c", 20),
            memory(1, "a", 0),
            memory(2, "b", 10),
            memory(4, "d", 60),  # 40 minutes after the last: a new session
            memory(5, "x", 5, chat="c2"),
        ],
        timedelta(minutes=30),
    )
    assert [[m.id for m in session] for session in found] == [[1, 2, 3], [5], [4]]
    assert sessions([], timedelta(minutes=30)) == []


def test_a_summary_keeps_the_most_informative_sentences_in_order_within_its_limit() -> None:
    session = [
        memory(1, "ok. I adopted a rescue greyhound called Pepper yesterday!", 0),
        memory(2, "What a lovely name for a greyhound.", 1, speaker="assistant"),
        memory(3, "She sleeps all day. She sleeps all day. Pepper loves carrots and long naps.", 2),
    ]
    text = summary_text(session, 480)
    assert text == (
        "2026-02-02: ok. / I adopted a rescue greyhound called Pepper yesterday! / She sleeps all day. / "
        "Pepper loves carrots and long naps."
    )
    short = summary_text(session, 80)
    assert short.startswith("2026-02-02: ") and len(short) <= 80
    assert "greyhound called Pepper" in short and "lovely" not in short
    long = memory(4, "word" * 200, 3)
    assert len(summary_text([long], 80)) <= 80
