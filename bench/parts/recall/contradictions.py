"""Contradicted facts and aged events, for bench/recall.py: what recall returns once memory is curated.

Each simulated person chats over dated sessions of everyday chatter. Early on they state facts that
they later contradict ("My favourite restaurant is Luigi's" … "Luigi's closed down last month";
"I live in Glasgow" … "I moved to Porto"; "I'm a smoker" … "I'm not a smoker any more"), and a
stable preference next to an event on the same topic ("I love hiking in the hills" … "Yesterday I
hiked up Ben Lomond"). Every turn goes in the way the product stores it: `add_turn` with the rules'
kind, the reply, then `remember_turn` (rules only) as the extraction job would; the night after
each session, and at question time, the nightly upkeep runs (checks, then consolidation with the
product's policy). Then, on the simulated clock, at least three months after the event:

- contradiction questions, one naming the subject and one only about the topic: whether the old
  fact comes back in the top K (`superseded_returned`, must be 0) and whether the new one does;
- aged-event questions on the preference's topic: how often the preference ranks above the event.
"""

from __future__ import annotations

import random
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from bench.parts.chatter import assistant_line, fill, user_line
from bench.parts.common import log
from bot.core.memory.checks import run_checks
from bot.core.memory.consolidation import consolidate
from bot.core.memory.kinds import classify
from bot.core.memory.operations import all_memories
from bot.core.memory.ports import Embedder
from bot.core.memory.recall import Recalled, hybrid_search
from bot.core.memory.remember import remember_turn
from bot.core.models import NewTurn
from bot.core.store import Store

K = 5
FETCH = 10
START = datetime(2026, 1, 12, 18, 30, tzinfo=UTC)
CHAT = "dm"
EXCHANGES = (4, 8)  # chatter exchanges per session
SESSION_DAYS = (5, 9)  # days between sessions
ASK_AFTER = timedelta(days=2)  # questions come this long after the last session
NIGHT = timedelta(hours=9)  # upkeep runs this long after a session's last turn
EVENT_AGE = timedelta(days=90)  # and at least this long after the aged events
Role = Literal["old", "new", "preference", "event"]
QuestionKind = Literal["named", "topical", "aged"]


@dataclass(frozen=True, slots=True)
class Change:
    """A fact and what later makes it untrue; the questions name the subject, then only the topic.

    The last wording of most is one people use that the rules (core/memory/contradiction.py) do not
    catch yet: the benchmark measures the product on how people talk, not on the rules' forms."""

    reason: str
    old: tuple[str, ...]
    new: tuple[str, ...]
    named: str
    topical: str
    slots: dict[str, tuple[str, ...]]


PLACES = (
    "Luigi's",
    "Casa Pepe",
    "The Golden Wok",
    "Bella Napoli",
    "Kaito Sushi",
    "Le Petit Zinc",
    "Taqueria Lupe",
    "Dishoom",
    "The Blue Lantern",
)
CITIES = ("Glasgow", "Lisbon", "Denver", "Osaka", "Montreal", "Krakow", "Bergen", "Valencia", "Halifax")
CHANGES: tuple[Change, ...] = (
    Change(
        "closed",
        (
            "My favourite restaurant is {place}, the {dish} there is amazing.",
            "We always go to {place} on Fridays, I love their {dish}.",
        ),
        (
            "{place} closed down last month, such a shame.",
            "Bad news, {place} has shut for good.",
            "Sadly {place} went out of business.",
        ),
        "Is {place} still a good place for dinner?",
        "Where should we go out to eat on Friday?",
        {"place": PLACES, "dish": ("pasta", "paella", "dumplings", "pizza", "sushi", "curry")},
    ),
    Change(
        "moved",
        (
            "I live in {city}, in a small flat near the station.",
            "I live in {city} with my partner.",
            "I've lived in {city} for six years.",
        ),
        (
            "I moved to {city2} last week for a new job.",
            "I've just relocated to {city2}, still unpacking.",
            "We just moved to {city2}!",
        ),
        "Do I still live in {city}?",
        "Which city do I live in?",
        {"city": CITIES, "city2": CITIES},
    ),
    Change(
        "no_longer",
        (
            "I'm vegetarian and I love cooking lentils.",
            "I'm vegetarian, mostly beans and tofu.",
            "I'm vegetarian, I don't eat meat at all.",
        ),
        ("I'm not vegetarian any more, I eat fish now.", "I'm no longer vegetarian."),
        "Am I vegetarian?",
        "What kind of diet do I follow?",
        {},
    ),
    Change(
        "no_longer",
        ("I'm a smoker, about ten a day.", "I'm a smoker, have been since college."),
        (
            "I'm not a smoker any more, I quit in spring.",
            "I'm no longer a smoker!",
            "I quit smoking in spring.",
        ),
        "Am I a smoker?",
        "Do I have any unhealthy habits?",
        {},
    ),
    Change(
        "no_longer",
        ("I play the {instrument} in a community orchestra.", "I play the {instrument} most evenings."),
        (
            "I don't play the {instrument} any more.",
            "I no longer play the {instrument}.",
            "I don't play the {instrument} any more, my wrist can't take it.",
        ),
        "Do I play the {instrument}?",
        "What music do I make?",
        {"instrument": ("cello", "violin", "trumpet", "oboe", "clarinet")},
    ),
    Change(
        "no_longer",
        ("I work at {company} as a designer.", "I work at {company}, mostly on the mobile app."),
        (
            "I no longer work at {company}.",
            "I don't work at {company} any more.",
            "I left {company} last month.",
        ),
        "Do I work at {company}?",
        "Where do I work?",
        {"company": ("Acme", "Northwind", "Globex", "Initech", "Umbrella Labs", "Stark Freight")},
    ),
)


@dataclass(frozen=True, slots=True)
class Pair:
    """A stable preference and an event on the same topic, and a question about the topic."""

    preference: str
    event: str
    question: str
    slots: dict[str, tuple[str, ...]] = field(default_factory=dict)


PAIRS: tuple[Pair, ...] = (
    Pair(
        "I love hiking in the hills, it clears my head.",
        "Yesterday I hiked up {peak} and got soaked.",
        "Should I go hiking this weekend?",
        {"peak": ("Ben Lomond", "Snowdon", "Mount Tam")},
    ),
    Pair(
        "I really like Japanese food, ramen most of all.",
        "Last night I had ramen at {place} with my sister.",
        "I'm craving noodles, where should I eat?",
        {"place": ("Ichiran", "Koya", "Menya")},
    ),
    Pair(
        "I love live jazz, it's my favourite kind of night out.",
        "Last Friday I went to a jazz gig at {venue}.",
        "Any ideas for a night out with music?",
        {"venue": ("the Blue Note", "Ronnie's", "the Vortex")},
    ),
    Pair(
        "I prefer green tea to coffee.",
        "This morning I had a double espresso at the station.",
        "Should I have coffee or tea this morning?",
    ),
    Pair(
        "My favourite films are old westerns.",
        "Yesterday I watched {film} at the cinema.",
        "What film should I watch tonight?",
        {"film": ("Dune", "Barbie", "Oppenheimer")},
    ),
    Pair(
        "I love swimming in the sea.",
        "Last weekend I swam at {beach} and it was freezing.",
        "Where could I go for a swim?",
        {"beach": ("Brighton", "Portobello", "Bondi")},
    ),
)


@dataclass(frozen=True, slots=True)
class Said:
    user_id: str
    text: str
    at: datetime
    session: int
    case: int | None = None  # index into the person's cases
    role: Role | None = None


@dataclass(frozen=True, slots=True)
class Probe:
    user_id: str
    text: str
    kind: QuestionKind
    case: int
    reason: str


@dataclass(slots=True)
class Conversations:
    said: list[Said]
    probes: list[Probe]
    ask_at: dict[str, datetime]
    # (user, case) → the statements, to report what failed
    texts: dict[tuple[str, int], dict[Role, str]]


def generate(users: int, sessions: int, seed: int) -> Conversations:
    """The same arguments always give the same conversations and questions."""
    rng = random.Random(seed * 7919 + 13)
    data = Conversations([], [], {}, {})
    for number in range(users):
        _person(rng, f"curated-{number:02d}", max(sessions, 4), data)
    return data


def _person(rng: random.Random, user_id: str, sessions: int, data: Conversations) -> None:
    plan: dict[int, list[tuple[int, Role, str]]] = defaultdict(list)
    half = sessions // 2
    for case, change in enumerate(CHANGES):
        values = {name: rng.choice(options) for name, options in change.slots.items()}
        if "city2" in values:
            values["city2"] = rng.choice([c for c in CITIES if c != values["city"]])
        old, new = fill(rng.choice(change.old), values), fill(rng.choice(change.new), values)
        plan[rng.randrange(half)].append((case, "old", old))
        plan[rng.randrange(half, sessions)].append((case, "new", new))
        data.texts[(user_id, case)] = {"old": old, "new": new}
        questions: tuple[tuple[QuestionKind, str], ...] = (
            ("named", change.named),
            ("topical", change.topical),
        )
        for kind, template in questions:
            data.probes.append(Probe(user_id, fill(template, values), kind, case, change.reason))
    for offset, pair in enumerate(PAIRS):
        case = len(CHANGES) + offset
        values = {name: rng.choice(options) for name, options in pair.slots.items()}
        event = fill(pair.event, values)
        plan[0].append((case, "preference", pair.preference))
        plan[1].append((case, "event", event))
        data.texts[(user_id, case)] = {"preference": pair.preference, "event": event}
        data.probes.append(Probe(user_id, pair.question, "aged", case, "aged"))
    day = START + timedelta(days=rng.randrange(7))
    events_at = day
    for session in range(sessions):
        lines: list[tuple[int | None, Role | None, str]] = [
            (None, None, user_line(rng)) for _ in range(rng.randint(*EXCHANGES))
        ]
        lines += plan[session]
        rng.shuffle(lines)
        at = day
        for index, role, text in lines:
            data.said.append(Said(user_id, text, at, session, index, role))
            at += timedelta(minutes=rng.randint(1, 5))
        events_at = at if session == 1 else events_at
        if session + 1 < sessions:
            day += timedelta(days=rng.randint(*SESSION_DAYS))
    data.ask_at[user_id] = max(day + ASK_AFTER, events_at + EVENT_AGE)


@dataclass(slots=True)
class Stored:
    """Memory ids per (user, case, role): the turn's own memory and what extraction made of it."""

    ids: dict[tuple[str, int, Role], set[int]] = field(default_factory=dict)
    at: dict[tuple[str, int, Role], datetime] = field(default_factory=dict)
    extraction_s: list[float] = field(default_factory=list)
    upkeep: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # what the nights did


async def load(store: Store, embedder: Embedder, data: Conversations) -> Stored:
    """Every turn through the product's path: user turn, reply, then the extraction job."""
    replies = [assistant_line(random.Random(index)) for index in range(len(data.said))]
    texts = sorted({s.text for s in data.said} | set(replies))
    vectors = dict(zip(texts, await embedder.embed(texts), strict=True))
    stored = Stored()
    for number, (said, reply) in enumerate(zip(data.said, replies, strict=True)):
        before = data.said[number - 1] if number else None
        if before is not None and (before.user_id, before.session) != (said.user_id, said.session):
            await upkeep(store, embedder, before.user_id, before.at + NIGHT, stored.upkeep)
        turn = await store.turns.add_turn(
            NewTurn(
                said.user_id,
                CHAT,
                "user",
                said.text,
                vectors[said.text],
                embedder.model_name,
                said.at,
                meta={"chat_id": CHAT},
                memory_kind=classify(said.text),
            )
        )
        answered = said.at + timedelta(seconds=20)
        await store.turns.add_turn(
            NewTurn(
                said.user_id,
                CHAT,
                "assistant",
                reply,
                vectors[reply],
                embedder.model_name,
                answered,
                reply_to=turn.id,
                meta={"chat_id": CHAT},
            )
        )
        began = time.perf_counter()
        done = await remember_turn(store, embedder, said.user_id, turn.memory_id, answered)
        stored.extraction_s.append(time.perf_counter() - began)
        if said.case is not None and said.role is not None:
            key = (said.user_id, said.case, said.role)
            stored.ids[key] = {turn.memory_id, *done.added, *done.updated}
            stored.at[key] = said.at
    return stored


async def upkeep(
    store: Store, embedder: Embedder, user_id: str, at: datetime, totals: dict[str, int]
) -> None:
    """The nightly job for one person: checks, then consolidation (the product's policy)."""
    totals["runs"] += 1
    totals["events_marked_past"] += (await run_checks(store, user_id, at)).get("event_date_passed", 0)
    for name, value in (await consolidate(store, embedder, user_id, at)).as_payload().items():
        totals[name] += value


def _rank(ids: set[int], top: Sequence[int]) -> int | None:
    ranks = [top.index(mid) for mid in ids if mid in top]
    return min(ranks) if ranks else None


def _share(flags: Sequence[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else float("nan")


async def evaluate(store: Store, embedder: Embedder, data: Conversations, show: int = 0) -> dict[str, Any]:
    """Store the conversations, run upkeep, ask every question; the two reports and extraction times."""
    stored = await load(store, embedder, data)
    for user_id, at in data.ask_at.items():
        await upkeep(store, embedder, user_id, at, stored.upkeep)
    vectors = await embedder.embed([probe.text for probe in data.probes])
    changes: list[dict[str, Any]] = []
    aged: list[dict[str, Any]] = []
    for probe, vector in zip(data.probes, vectors, strict=True):
        now = data.ask_at[probe.user_id]
        hits = await hybrid_search(store, probe.user_id, probe.text, vector, FETCH, now=now)
        if probe.kind == "aged":
            # Relevance alone as the control: what decay changes.
            plain = await hybrid_search(store, probe.user_id, probe.text, vector, FETCH, scoring=None)
            aged.append(_aged_row(probe, hits, plain, stored, now))
            continue
        row = await _change_row(store, probe, hits, stored)
        changes.append(row)
        if show and (row["old_returned"] or not row["new_found"]):
            show -= 1
            texts = data.texts[(probe.user_id, probe.case)]
            what = "old fact returned" if row["old_returned"] else "new fact missed"
            log(f"[{what}, {probe.reason}] {probe.text!r}: {texts['old']!r} then {texts['new']!r}")
            for hit in hits[:3]:
                log(f"      got: {hit.memory.text!r}")
    return {
        "contradictions": _contradiction_report(changes, await _other_superseded(store, data, stored)),
        "aged_events": _aged_report(aged),
        "upkeep": dict(stored.upkeep),
        "extraction_s": stored.extraction_s,
    }


def _aged_row(
    probe: Probe, hits: Sequence[Recalled], plain: Sequence[Recalled], stored: Stored, now: datetime
) -> dict[str, Any]:
    key = (probe.user_id, probe.case)
    row: dict[str, Any] = {
        "age": (now - stored.at[(*key, "event")]).days,
        "unrecallable": sum(not hit.memory.recallable for hit in hits[:K]),
    }
    for prefix, found in (("", hits), ("plain_", plain)):
        ranked = [hit.memory.id for hit in found]
        row[prefix + "pref"] = _rank(stored.ids[(*key, "preference")], ranked)
        row[prefix + "event"] = _rank(stored.ids[(*key, "event")], ranked)
    return row


async def _change_row(store: Store, probe: Probe, hits: Sequence[Recalled], stored: Stored) -> dict[str, Any]:
    old_ids = stored.ids[(probe.user_id, probe.case, "old")]
    new_ids = stored.ids[(probe.user_id, probe.case, "new")]
    top = [hit.memory.id for hit in hits[:K]]
    [old_memory, *_] = await store.curation.get_memories(probe.user_id, sorted(old_ids)[:1])
    [new_memory, *_] = await store.curation.get_memories(probe.user_id, sorted(new_ids)[:1])
    # The old wording kept alive elsewhere: in a summary, say, or a twin it was folded into.
    old_text = old_memory.text.rstrip(".!").lower()
    stale = any(hit.memory.id not in old_ids and old_text in hit.memory.text.lower() for hit in hits[:K])
    # A summary that covers the new statement's turn and says it in full answers for it.
    new_text = new_memory.text.rstrip(".!").lower()
    in_summary = any(
        hit.memory.kind == "summary"
        and new_text in hit.memory.text.lower()
        and new_ids & set(_ids(hit.memory.meta.get("covers")))
        for hit in hits[:K]
    )
    return {
        "reason": probe.reason,
        "kind": probe.kind,
        "stale_text": stale,
        "old_returned": _rank(old_ids, top) is not None,
        "new_found": _rank(new_ids, top) is not None or in_summary,
        "old_superseded": old_memory.status == "superseded",
        "old_unrecallable": not old_memory.recallable,
        "unrecallable": sum(not hit.memory.recallable for hit in hits[:K]),
    }


def _ids(value: object) -> list[int]:
    return [item for item in value if isinstance(item, int)] if isinstance(value, list) else []


async def _other_superseded(store: Store, data: Conversations, stored: Stored) -> int:
    """Memories marked superseded, and sentences dropped from summaries, that are not a
    contradicted fact: wrong supersessions."""
    old = {mid for (_, _, role), ids in stored.ids.items() if role == "old" for mid in ids}
    old_texts = {texts["old"].lower() for texts in data.texts.values() if "old" in texts}
    wrongly = 0
    for user_id in data.ask_at:
        async for memory in all_memories(store.memories, user_id):
            wrongly += memory.status == "superseded" and memory.id not in old and memory.kind != "summary"
            dropped = memory.meta.get("dropped")
            for item in dropped if isinstance(dropped, list) else []:
                said = str(item.get("text", "")).lower() if isinstance(item, dict) else ""
                wrongly += not any(said in text or text in said for text in old_texts)
    return wrongly


def _contradiction_report(rows: Sequence[dict[str, Any]], wrongly: int) -> dict[str, Any]:
    named = [r for r in rows if r["kind"] == "named"]
    # The old fact, or its words inside another memory (a summary written before the news).
    returned = sum(r["old_returned"] or r["stale_text"] for r in rows)
    by_reason: dict[str, Any] = {}
    for reason in sorted({r["reason"] for r in rows}):
        mine = [r for r in rows if r["reason"] == reason]
        by_reason[reason] = {
            "questions": len(mine),
            "old_fact_superseded": _share([r["old_superseded"] for r in mine if r["kind"] == "named"]),
            "superseded_returned": sum(r["old_returned"] or r["stale_text"] for r in mine),
            f"new_fact_recall@{K}": _share([r["new_found"] for r in mine]),
        }
    return {
        "cases": len(named),
        "questions": len(rows),
        "old_fact_superseded": _share([r["old_superseded"] for r in named]),
        # Superseded, or archived by consolidation before the news came (its summary revised).
        "old_fact_unrecallable": _share([r["old_unrecallable"] for r in named]),
        "superseded_returned": returned,
        "superseded_returned_rate": _share([r["old_returned"] or r["stale_text"] for r in rows]),
        "old_text_returned_in_another_memory": sum(r["stale_text"] for r in rows),
        # The leak that matters: the fact was superseded, yet its words come back (in a summary).
        "superseded_text_returned_in_another_memory": sum(
            r["stale_text"] and r["old_superseded"] for r in rows
        ),
        "unrecallable_returned": sum(r["unrecallable"] for r in rows),
        f"new_fact_recall@{K}": {
            kind: _share([r["new_found"] for r in rows if r["kind"] == kind]) for kind in ("named", "topical")
        }
        | {"all": _share([r["new_found"] for r in rows])},
        "other_memories_superseded": wrongly,
        "by_reason": by_reason,
        "target": {
            "superseded_returned": 0,
            "other_memories_superseded": 0,
            "pass": returned == 0 and wrongly == 0,
        },
    }


def _aged_report(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`preference_ranks_first`: of the pairs where recall finds either, the share where the
    preference comes before the event (or the event is not found at all)."""

    def first(prefix: str) -> tuple[float, int]:
        found = [r for r in rows if r[prefix + "pref"] is not None or r[prefix + "event"] is not None]
        ahead = [
            r[prefix + "pref"] is not None
            and (r[prefix + "event"] is None or r[prefix + "pref"] < r[prefix + "event"])
            for r in found
        ]
        return _share(ahead), len(rows) - len(found)

    ages = [r["age"] for r in rows]
    (shipped, neither), (plain, _) = first(""), first("plain_")
    return {
        "pairs": len(rows),
        "event_age_days": {"min": min(ages), "median": statistics.median(ages), "max": max(ages)},
        "preference_ranks_first": shipped,
        "preference_ranks_first_relevance_only": plain,
        f"neither_in_top{FETCH}": neither,
        "preference_top1": _share([r["pref"] == 0 for r in rows]),
        f"preference_in_top{K}": _share([r["pref"] is not None and r["pref"] < K for r in rows]),
        f"event_in_top{K}": _share([r["event"] is not None and r["event"] < K for r in rows]),
        "unrecallable_returned": sum(r["unrecallable"] for r in rows),
    }
