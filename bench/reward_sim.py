"""Reward simulation: does reward weighting put the memories a person cares about into the context?

Simulated people share one catalogue of suggestions (memories about places, films, books, food and
outings) but each has hidden tastes: they like some suggestions of every topic. Over simulated weeks
each person asks topic questions; Kindred recalls the top 5 memories for each, stores the reply with
each memory's share of the retrieval score, and the person reacts to the suggestion the reply leads
with (❤️ if they like it, 👎 if not, sometimes nothing). The core's own code does the work: hybrid
search, shares, the store's derived credit, and the scoring.

The same people, questions and reactions run twice, on fresh stores: with reward weighting (the
shipped scoring) and with relevance alone. The report gives precision@5 of the recalled memories
(the share the person likes) at the end, for both, and the difference.

    .venv/bin/python -m bench.reward_sim --quick
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.common import exit_cleanly_on_sigterm, log, machine, now_iso, open_store
from bot.core.models import Feedback, NewMemory, NewTurn, Vector
from bot.core.ports import Embedder, Store
from bot.core.recall import hybrid_search
from bot.core.scoring import SHIPPED, Scoring, shares

K = 5
TARGET_POINTS = 15.0
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
TOPICS: dict[str, tuple[list[str], list[str]]] = {
    "food": (
        ["what should I eat tonight?", "any dinner ideas?", "where could I get good food?"],
        ["a Thai curry at Baan", "ramen at Ichiran", "tapas at El Born", "the vegan bowls at Greenhouse",
         "pizza at Da Michele", "dumplings at Din Tai", "the burger at Patty's", "sushi at Kaito",
         "Ethiopian injera at Axum", "pho at Saigon Corner"],
    ),
    "films": (
        ["what film should I watch?", "any movie tips for tonight?", "recommend me a film"],
        ["the film Arrival", "the film Paddington 2", "the film Heat", "the film Amelie",
         "the film Spirited Away", "the film Alien", "the film Before Sunrise", "the film Parasite",
         "the film The Big Lebowski", "the film Mad Max: Fury Road"],
    ),
    "books": (
        ["what should I read next?", "any book recommendations?", "a good novel to read?"],
        ["the novel Piranesi", "the novel Dune", "the novel Normal People", "the novel The Road",
         "the novel Circe", "the novel Project Hail Mary", "the novel Pachinko", "the novel Stoner",
         "the novel The Remains of the Day", "the novel Klara and the Sun"],
    ),
    "outings": (
        ["what could I do this weekend?", "any ideas for a day out?", "where should I go on Saturday?"],
        ["a hike up Ridge Peak", "the science museum", "a kayak trip on the river", "the botanical garden",
         "the flea market on Canal Street", "a climbing gym session", "the old town walking tour",
         "a cycling loop around the lake", "the modern art gallery", "a day at the beach"],
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
        await store.add_memories(
            [NewMemory(person.user_id, text, None, T0, vectors[text], model, "fact") for text in texts]
        )


async def ask(
    store: Store, person: Person, query: str, vectors: dict[str, Vector], scoring: Scoring | None,
    at: datetime, exclude: set[int],
) -> list[tuple[int, float, str]]:
    found = await hybrid_search(store, person.user_id, query, vectors[query], K, exclude=exclude,
                                scoring=scoring, now=at)
    return [(item.memory.id, item.score, item.memory.text) for item in found]


async def live(store: Store, crowd: Sequence[Person], shape: Shape, vectors: dict[str, Vector],
               scoring: Scoring | None, model: str) -> None:
    """The simulated weeks: questions, replies stored with shares, reactions."""
    rng = random.Random(shape.seed + 1)  # the same questions and reactions in both runs
    replies: dict[str, set[int]] = {person.user_id: set() for person in crowd}
    for day in range(shape.weeks * 7):
        for person in crowd:
            for slot in range(shape.questions_per_day):
                at = T0 + timedelta(days=day + 1, hours=slot * 6)
                queries, _ = TOPICS[rng.choice(list(TOPICS))]
                recalled = await ask(store, person, rng.choice(queries), vectors, scoring, at,
                                     replies[person.user_id])
                reply = await store.add_turn(NewTurn(
                    person.user_id, "dm", "assistant", "…", vectors["…"], model, at,
                    used_memory_ids=tuple(mid for mid, _, _ in recalled),
                    memory_shares=shares([score for _, score, _ in recalled]),
                ))
                replies[person.user_id].add(reply.memory_id)
                if recalled and rng.random() < shape.react_probability:
                    # The reply draws on its whole context: most of it to their taste, or not.
                    liked = sum(text in person.liked for _, _, text in recalled) * 2 > len(recalled)
                    await store.record_feedback(Feedback(
                        reply.id, person.user_id, "❤️" if liked else "👎", 1.0 if liked else -1.0, at))


async def precision(store: Store, crowd: Sequence[Person], vectors: dict[str, Vector],
                    scoring: Scoring | None, at: datetime) -> float:
    hits = asked = 0
    for person in crowd:
        replies = {turn.memory_id for turn in await store.recent_turns(person.user_id, "dm", 10_000)}
        for queries, _ in TOPICS.values():
            for query in queries:
                recalled = await ask(store, person, query, vectors, scoring, at, replies)
                hits += sum(text in person.liked for _, _, text in recalled)
                asked += K
    return hits / asked


async def one_run(backend: str, crowd: Sequence[Person], shape: Shape, vectors: dict[str, Vector],
                  scoring: Scoring | None, model: str) -> dict[str, float]:
    async with open_store(backend) as opened:
        await seed(opened.store, crowd, vectors, model)
        end = T0 + timedelta(days=shape.weeks * 7 + 1)
        before = await precision(opened.store, crowd, vectors, scoring, T0)
        await live(opened.store, crowd, shape, vectors, scoring, model)
        after = await precision(opened.store, crowd, vectors, scoring, end)
    return {"precision@5_before": round(before, 4), "precision@5_after": round(after, 4)}


async def embed_all(embedder: Embedder) -> dict[str, Vector]:
    texts = ["…"] + [suggestion(item) for _, items in TOPICS.values() for item in items]
    texts += [query for queries, _ in TOPICS.values() for query in queries]
    return dict(zip(texts, await embedder.embed(texts), strict=True))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from bot.inference.embedder import SentenceTransformerEmbedder

    shape = QUICK if args.quick else Shape()
    changes = {name: getattr(args, name) for name in ("seed", "weeks", "people")}
    shape = dataclasses.replace(shape, **{k: v for k, v in changes.items() if v is not None})
    crowd = people(shape, random.Random(shape.seed))
    embedder = SentenceTransformerEmbedder.load()
    try:
        vectors = await embed_all(embedder)
    finally:
        await embedder.close()
    results: dict[str, dict[str, float]] = {}
    weighted = dataclasses.replace(SHIPPED, mix=args.mix) if args.mix is not None else SHIPPED
    for mode, scoring in (("reward_weighted", weighted), ("relevance_only", None)):
        log(f"simulating {shape.people} people over {shape.weeks} weeks: {mode}")
        results[mode] = await one_run("sqlite", crowd, shape, vectors, scoring, embedder.model_name)
    after = {mode: result["precision@5_after"] for mode, result in results.items()}
    gain = 100 * (after["reward_weighted"] - after["relevance_only"])
    return {
        "benchmark": "reward_sim",
        "date": now_iso(),
        "machine": machine(),
        "shape": {"people": shape.people, "weeks": shape.weeks, "questions_per_day": shape.questions_per_day,
                  "suggestions": sum(len(items) for _, items in TOPICS.values()),
                  "liked_per_topic": shape.liked_per_topic, "react_probability": shape.react_probability,
                  "seed": shape.seed},
        "embedding_model": embedder.model_name,
        "weight_mix": weighted.mix,
        "results": results,
        "gain_points": round(gain, 1),
        "target": {"gain_points_at_least": TARGET_POINTS, "pass": gain >= TARGET_POINTS},
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="4 people (of 8): about half a minute")
    parser.add_argument("--people", type=int, help="simulated people (default 8, quick 4)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--weeks", type=int, help="simulated weeks (default 6, quick 3)")
    parser.add_argument("--mix", type=float, help=f"KINDRED_MEMORY_WEIGHT_MIX to try ({SHIPPED.mix} ships)")
    args = parser.parse_args(argv)
    exit_cleanly_on_sigterm()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
