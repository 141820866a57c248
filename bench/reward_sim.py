"""Reward simulation: does reward weighting put the memories a person cares about into the context?

Simulated people share one catalogue of suggestions (memories about places, films, books, food and
outings) but each has hidden tastes: they like some suggestions of every topic. Over simulated weeks
each person asks topic questions; Kindred recalls the top 5 memories for each, stores the reply with
each memory's share of the retrieval score, and the person reacts to the suggestion the reply leads
with (❤️ if they like it, 👎 if not, sometimes nothing). The core's own code does the work: hybrid
search, shares, the store's derived credit, and the scoring.

The same people, questions and reactions run three times, on fresh stores: with reward weighting
(the shipped scoring), with relevance alone, and with reward weighting plus nightly consolidation
(core/memory/consolidation.py, run each simulated night as the upkeep job would). The report gives
precision@5 of the recalled memories (the share the person likes) at the end, the reward gain, and
for consolidation how many memories stay recallable (and stored) against the run without it.

Each day is one session per person: the questions (stored as user turns) and the replies, minutes
apart. Precision is over what the conversation did not write itself: its turns, and the summaries
made of them, are excluded, as the replies always were. `precision@5_after_any_memory` excludes
nothing, so raw turns and summaries compete with the suggestions there.

    .venv/bin/python -m bench.reward_sim --quick
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.parts.common import exit_cleanly_on_sigterm, log, machine, now_iso, open_store
from bot.core.memory.consolidation import ConsolidationPolicy, consolidate
from bot.core.memory.operations import all_memories
from bot.core.memory.ports import Embedder
from bot.core.memory.recall import hybrid_search
from bot.core.memory.scoring import SHIPPED, Scoring, shares
from bot.core.models import Feedback, NewMemory, NewTurn, Vector
from bot.core.store import Store

K = 5
TARGET_POINTS = 15.0
# The [memory] issue: consolidation cuts stored items by at least half at equal precision.
TARGET_CUT = 0.5
EQUAL_PRECISION_POINTS = 1.0  # "equal": precision@5 lower by at most this many points
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
CHAT = "dm"
NIGHT = timedelta(hours=18)  # upkeep runs at 03:00, eighteen hours after the day's session
# The product's defaults are 14 days and 5,000 memories, sized for years of chat; this simulation
# covers weeks, so both are scaled down to make consolidation and the budget apply within it.
CONSOLIDATION = ConsolidationPolicy(older_than=timedelta(days=3), budget=60)
MODES = ("reward_weighted", "relevance_only", "reward_weighted_consolidated")
TOPICS: dict[str, tuple[list[str], list[str]]] = {
    "food": (
        ["what should I eat tonight?", "any dinner ideas?", "where could I get good food?"],
        [
            "a Thai curry at Baan",
            "ramen at Ichiran",
            "tapas at El Born",
            "the vegan bowls at Greenhouse",
            "pizza at Da Michele",
            "dumplings at Din Tai",
            "the burger at Patty's",
            "sushi at Kaito",
            "Ethiopian injera at Axum",
            "pho at Saigon Corner",
        ],
    ),
    "films": (
        ["what film should I watch?", "any movie tips for tonight?", "recommend me a film"],
        [
            "the film Arrival",
            "the film Paddington 2",
            "the film Heat",
            "the film Amelie",
            "the film Spirited Away",
            "the film Alien",
            "the film Before Sunrise",
            "the film Parasite",
            "the film The Big Lebowski",
            "the film Mad Max: Fury Road",
        ],
    ),
    "books": (
        ["what should I read next?", "any book recommendations?", "a good novel to read?"],
        [
            "the novel Piranesi",
            "the novel Dune",
            "the novel Normal People",
            "the novel The Road",
            "the novel Circe",
            "the novel Project Hail Mary",
            "the novel Pachinko",
            "the novel Stoner",
            "the novel The Remains of the Day",
            "the novel Klara and the Sun",
        ],
    ),
    "outings": (
        ["what could I do this weekend?", "any ideas for a day out?", "where should I go on Saturday?"],
        [
            "a hike up Ridge Peak",
            "the science museum",
            "a kayak trip on the river",
            "the botanical garden",
            "the flea market on Canal Street",
            "a climbing gym session",
            "the old town walking tour",
            "a cycling loop around the lake",
            "the modern art gallery",
            "a day at the beach",
        ],
    ),
}


@dataclass(frozen=True, slots=True)
class Shape:
    people: int = 8
    weeks: int = 6
    questions_per_day: int = 2
    liked_per_topic: int = 4
    react_probability: float = 0.7
    seed: int = 7


QUICK = Shape(people=4, weeks=6)


@dataclass(frozen=True, slots=True)
class Person:
    user_id: str
    liked: frozenset[str]  # suggestion texts this person likes


def suggestion(item: str) -> str:
    return f"You suggested {item}."


def people(shape: Shape, rng: random.Random) -> list[Person]:
    found = []
    for number in range(shape.people):
        picks = [rng.sample(items, shape.liked_per_topic) for _, items in TOPICS.values()]
        liked = {suggestion(item) for items in picks for item in items}
        found.append(Person(f"sim-{number:02d}", frozenset(liked)))
    return found


async def seed(store: Store, crowd: Sequence[Person], vectors: dict[str, Vector], model: str) -> None:
    texts = [suggestion(item) for _, items in TOPICS.values() for item in items]
    for person in crowd:
        await store.memories.add_memories(
            [NewMemory(person.user_id, text, None, T0, vectors[text], model, "fact") for text in texts]
        )


async def ask(
    store: Store,
    person: Person,
    query: str,
    vectors: dict[str, Vector],
    scoring: Scoring | None,
    at: datetime,
    exclude: Collection[int],
) -> list[tuple[int, float, str]]:
    found = await hybrid_search(
        store, person.user_id, query, vectors[query], K, exclude=exclude, scoring=scoring, now=at
    )
    return [(item.memory.id, item.score, item.memory.text) for item in found]


@dataclass(frozen=True, slots=True)
class Run:
    """One simulation's settings: how recall is scored, and whether upkeep consolidates."""

    scoring: Scoring | None
    consolidation: ConsolidationPolicy | None = None


async def conversation_memories(store: Store, user_id: str) -> set[int]:
    """The memories the conversation wrote itself: its turns and the summaries made of them."""
    turns = {turn.memory_id for turn in await store.turns.recent_turns(user_id, CHAT, 100_000)}
    return turns | {m.id async for m in all_memories(store.memories, user_id) if m.kind == "summary"}


async def live(
    store: Store,
    embedder: Embedder,
    crowd: Sequence[Person],
    shape: Shape,
    vectors: dict[str, Vector],
    run: Run,
) -> None:
    """The simulated weeks: one session a day of questions, replies stored with shares, reactions;
    each night, consolidation when the run has it."""
    rng = random.Random(shape.seed + 1)  # the same questions and reactions in every run
    own: dict[str, set[int]] = {person.user_id: set() for person in crowd}
    for day in range(shape.weeks * 7):
        for person in crowd:
            for slot in range(shape.questions_per_day):
                at = T0 + timedelta(days=day + 1, minutes=slot * 4)
                queries, _ = TOPICS[rng.choice(list(TOPICS))]
                query = rng.choice(queries)
                asked = await store.turns.add_turn(
                    NewTurn(
                        person.user_id,
                        CHAT,
                        "user",
                        query,
                        vectors[query],
                        embedder.model_name,
                        at,
                        meta={"chat_id": CHAT},
                    )
                )
                own[person.user_id].add(asked.memory_id)
                recalled = await ask(store, person, query, vectors, run.scoring, at, own[person.user_id])
                replied_at = at + timedelta(minutes=1)
                reply = await store.turns.add_turn(
                    NewTurn(
                        person.user_id,
                        CHAT,
                        "assistant",
                        "…",
                        vectors["…"],
                        embedder.model_name,
                        replied_at,
                        used_memory_ids=tuple(mid for mid, _, _ in recalled),
                        reply_to=asked.id,
                        memory_shares=shares([score for _, score, _ in recalled]),
                        meta={"chat_id": CHAT},
                    )
                )
                own[person.user_id].add(reply.memory_id)
                if recalled and rng.random() < shape.react_probability:
                    # The reply draws on its whole context: most of it to their taste, or not.
                    liked = sum(text in person.liked for _, _, text in recalled) * 2 > len(recalled)
                    await store.turns.record_feedback(
                        Feedback(
                            reply.id,
                            person.user_id,
                            "❤️" if liked else "👎",
                            1.0 if liked else -1.0,
                            replied_at,
                        )
                    )
        if run.consolidation is not None:
            night = T0 + timedelta(days=day + 1) + NIGHT
            for person in crowd:
                await consolidate(store, embedder, person.user_id, night, run.consolidation)
                own[person.user_id] = await conversation_memories(store, person.user_id)


async def precision(
    store: Store,
    crowd: Sequence[Person],
    vectors: dict[str, Vector],
    scoring: Scoring | None,
    at: datetime,
    *,
    any_memory: bool = False,
) -> float:
    """The share of liked suggestions in the top K of every question. `any_memory`: nothing is
    excluded, so the conversation's own turns and summaries take places too."""
    hits = asked = 0
    for person in crowd:
        own = set() if any_memory else await conversation_memories(store, person.user_id)
        for queries, _ in TOPICS.values():
            for query in queries:
                recalled = await ask(store, person, query, vectors, scoring, at, own)
                hits += sum(text in person.liked for _, _, text in recalled)
                asked += K
    return hits / asked


async def counts(store: Store, crowd: Sequence[Person]) -> dict[str, int]:
    """Memories still recallable (not archived, merged or superseded), and rows stored in all."""
    recallable = rows = 0
    for person in crowd:
        async for memory in all_memories(store.memories, person.user_id):
            rows += 1
            recallable += memory.recallable
    return {"recallable": recallable, "rows": rows}


async def one_run(
    backend: str,
    embedder: Embedder,
    crowd: Sequence[Person],
    shape: Shape,
    vectors: dict[str, Vector],
    run: Run,
) -> dict[str, Any]:
    async with open_store(backend) as opened:
        store = opened.store
        await seed(store, crowd, vectors, embedder.model_name)
        end = T0 + timedelta(days=shape.weeks * 7 + 1)
        before = await precision(store, crowd, vectors, run.scoring, T0)
        await live(store, embedder, crowd, shape, vectors, run)
        after = await precision(store, crowd, vectors, run.scoring, end)
        anything = await precision(store, crowd, vectors, run.scoring, end, any_memory=True)
        memories = await counts(store, crowd)
    return {
        "precision@5_before": round(before, 4),
        "precision@5_after": round(after, 4),
        "precision@5_after_any_memory": round(anything, 4),
        "memories": memories,
    }


def consolidation_report(results: dict[str, dict[str, Any]], policy: ConsolidationPolicy) -> dict[str, Any]:
    """Consolidation against the same run without it: the cut in recallable memories, and precision."""
    without, with_ = results["reward_weighted"], results["reward_weighted_consolidated"]
    cut = 1 - with_["memories"]["recallable"] / without["memories"]["recallable"]
    drop = {
        key: round(100 * (without[key] - with_[key]), 1)
        for key in ("precision@5_after", "precision@5_after_any_memory")
    }
    return {
        "policy": {
            "older_than_days": policy.older_than.total_seconds() / 86400,
            "session_gap_minutes": policy.session_gap.total_seconds() / 60,
            "min_turns": policy.min_turns,
            "covered_weight": policy.covered_weight,
            "budget": policy.budget,
            "runs": "each simulated night",
        },
        "recallable_without": without["memories"]["recallable"],
        "recallable_with": with_["memories"]["recallable"],
        "rows_with": with_["memories"]["rows"],
        "recallable_cut": round(cut, 4),
        "precision_drop_points": drop,
        "target": {
            "recallable_cut_at_least": TARGET_CUT,
            "precision_drop_points_at_most": EQUAL_PRECISION_POINTS,
            "pass": cut >= TARGET_CUT and drop["precision@5_after"] <= EQUAL_PRECISION_POINTS,
        },
    }


async def embed_all(embedder: Embedder) -> dict[str, Vector]:
    texts = ["…"] + [suggestion(item) for _, items in TOPICS.values() for item in items]
    texts += [query for queries, _ in TOPICS.values() for query in queries]
    return dict(zip(texts, await embedder.embed(texts), strict=True))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder

    shape = QUICK if args.quick else Shape()
    changes = {name: getattr(args, name) for name in ("seed", "weeks", "people")}
    shape = dataclasses.replace(shape, **{k: v for k, v in changes.items() if v is not None})
    crowd = people(shape, random.Random(shape.seed))
    embedder = SentenceTransformerEmbedder.load()
    weighted = dataclasses.replace(SHIPPED, mix=args.mix) if args.mix is not None else SHIPPED
    policy = dataclasses.replace(
        CONSOLIDATION,
        **{
            name: value
            for name, value in (("budget", args.budget), ("older_than", args.older_than))
            if value is not None
        },
    )
    runs = {
        "reward_weighted": Run(weighted),
        "relevance_only": Run(None),
        "reward_weighted_consolidated": Run(weighted, policy),
    }
    results: dict[str, dict[str, Any]] = {}
    try:
        vectors = await embed_all(embedder)
        for mode in MODES:
            log(f"simulating {shape.people} people over {shape.weeks} weeks: {mode}")
            results[mode] = await one_run("sqlite", embedder, crowd, shape, vectors, runs[mode])
    finally:
        await embedder.close()
    after = {mode: result["precision@5_after"] for mode, result in results.items()}
    gain = 100 * (after["reward_weighted"] - after["relevance_only"])
    return {
        "benchmark": "reward_sim",
        "date": now_iso(),
        "machine": machine(),
        "shape": {
            "people": shape.people,
            "weeks": shape.weeks,
            "questions_per_day": shape.questions_per_day,
            "suggestions": sum(len(items) for _, items in TOPICS.values()),
            "liked_per_topic": shape.liked_per_topic,
            "react_probability": shape.react_probability,
            "seed": shape.seed,
        },
        "embedding_model": embedder.model_name,
        "weight_mix": weighted.mix,
        "results": results,
        "gain_points": round(gain, 1),
        "target": {"gain_points_at_least": TARGET_POINTS, "pass": gain >= TARGET_POINTS},
        "consolidation": consolidation_report(results, policy),
    }


def days(text: str) -> timedelta:
    return timedelta(days=float(text))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="4 people (of 8): under a minute")
    parser.add_argument("--people", type=int, help="simulated people (default 8, quick 4)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--weeks", type=int, help="simulated weeks (default 6)")
    parser.add_argument("--mix", type=float, help=f"KINDRED_MEMORY_WEIGHT_MIX to try ({SHIPPED.mix} ships)")
    parser.add_argument(
        "--budget",
        type=int,
        help=f"consolidation's recallable memories per person (default {CONSOLIDATION.budget})",
    )
    parser.add_argument(
        "--older-than",
        type=days,
        metavar="DAYS",
        help=f"consolidate sessions older than DAYS (default {CONSOLIDATION.older_than.days})",
    )
    args = parser.parse_args(argv)
    exit_cleanly_on_sigterm()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
