"""Contradiction rules (core/contradiction.py): which statements make older memories untrue, and
which older memories they make untrue. Pure: memories are built here, no store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.contradiction import Contradiction, contradicts, detect, same_place, search_terms
from bot.core.models import Memory

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def memory(
    memory_id: int,
    text: str,
    *,
    speaker: str = "user",
    age: timedelta = timedelta(days=3),
    status: str = "active",
) -> Memory:
    return Memory(memory_id, "ann", "fact", text, speaker, NOW - age, "m", status=status)


def undoes(new: str, older: str, **kwargs: object) -> bool:
    found = detect(new)
    assert found is not None, new
    return contradicts(found, memory(100, new, age=timedelta(0)), memory(1, older, **kwargs))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Luigi's closed down", Contradiction("closed", ("luigi",))),
        ("Luigi’s closed down last week", Contradiction("closed", ("luigi",))),
        ("Luigi's has closed for good.", Contradiction("closed", ("luigi",))),
        ("Sad news: Luigi's has closed.", Contradiction("closed", ("luigi",))),
        ("The Blue Fox closed its doors", Contradiction("closed", ("blue", "fox"))),
        ("The Blue Fox went out of business", Contradiction("closed", ("blue", "fox"))),
        ("Café Rio doesn't exist anymore", Contradiction("closed", ("café", "rio"))),
        ("I moved to Berlin", Contradiction("moved", ("live",), "Berlin")),
        ("i moved to berlin", Contradiction("moved", ("live",), "berlin")),
        ("I've just moved to New York City!", Contradiction("moved", ("live",), "New York City")),
        ("I moved to Berlin last year", Contradiction("moved", ("live",), "Berlin")),
        ("I live in Lisbon now", Contradiction("moved", ("live",), "Lisbon")),
        ("I'm now based in São Paulo", Contradiction("moved", ("live",), "São Paulo")),
        ("I'm not vegetarian anymore", Contradiction("no_longer", ("vegetarian",))),
        ("I'm not vegetarian any more.", Contradiction("no_longer", ("vegetarian",))),
        ("I'm no longer a smoker", Contradiction("no_longer", ("smoker",))),
        ("I don't eat meat any more", Contradiction("no_longer", ("eat", "meat"))),
        ("I no longer play tennis", Contradiction("no_longer", ("play", "tennis"))),
    ],
)
def test_news_that_makes_something_untrue_is_detected(text: str, expected: Contradiction) -> None:
    assert detect(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The door closed.",
        "The door closed behind me",
        "It shut down",
        "Then I closed the window",
        "Mum closed the door",  # closing a thing is not a place closing
        "Mum shut down the computer",
        "Tesco closed early today",  # closed for the day, not for good
        "We closed the deal",
        "I closed my account",
        "I like Luigi's",
        "I live in Berlin",  # a residence, but no news of a move
        "I live in a flat now",
        "I'm not vegetarian",  # a state, not a change
        "I don't eat meat",
        "I moved the sofa",
        "",
    ],
)
def test_ordinary_statements_contradict_nothing(text: str) -> None:
    assert detect(text) is None


@pytest.mark.parametrize(
    ("older", "expected"),
    [
        ("I live in Lisbon", True),
        ("I'm living in Paris", True),
        ("I'm based in New York", True),
        ("I moved to Lisbon in 2020", True),
        ("I live in Lisbon with my wife", True),
        ("I live in Berlin", False),  # the same city
        ("i live in berlin", False),
        ("I moved to Berlin", False),  # the same news, said before
        ("I lived in Rome as a kid", False),  # history stays true
        ("I live in a flat", False),  # no place named
        ("I like Berlin", False),
        ("My sister lives in Madrid", False),
    ],
)
def test_a_move_undoes_residence_in_another_city(older: str, expected: bool) -> None:
    assert undoes("I moved to Berlin last year", older) is expected


def test_same_city_however_it_is_spelled() -> None:
    assert not undoes("I moved to Lisbon", "I live in Lisbon with my wife")
    assert not undoes("I moved to new york", "I live in New York City")
    assert undoes("I moved to New York", "I live in New Delhi")
    assert same_place("New York", "new york city") and not same_place("San Diego", "San Francisco")


@pytest.mark.parametrize(
    ("older", "expected"),
    [
        ("I love Luigi's pizza", True),
        ("Luigi's is my favourite restaurant", True),
        ("We had our first date at Luigi’s", True),
        ("I like Mario's", False),
        ("Luigi's closed down", False),  # the same news twice is not a contradiction of itself
    ],
)
def test_a_closure_undoes_what_mentions_the_place(older: str, expected: bool) -> None:
    assert undoes("Luigi's closed down", older) is expected


@pytest.mark.parametrize(
    ("new", "older", "expected"),
    [
        ("I'm not vegetarian anymore", "I'm vegetarian", True),
        ("I'm not vegetarian anymore", "I am a vegetarian", True),
        ("I'm not vegetarian anymore", "I'm not vegetarian", False),  # already agrees
        ("I'm not vegetarian anymore", "My sister is vegetarian", False),  # not about the person
        ("I don't eat meat any more", "I eat meat every day", True),
        ("I don't eat meat any more", "I never eat meat", False),
        ("I don't eat meat any more", "I don't eat meat", False),
        ("I'm no longer a smoker", "I'm a smoker, sadly", True),
        ("I'm no longer a smoker", "I like tea", False),
    ],
)
def test_no_longer_undoes_the_plain_older_statement(new: str, older: str, expected: bool) -> None:
    assert undoes(new, older) is expected


def test_only_older_recallable_memories_of_the_person_are_undone() -> None:
    assert not undoes("I moved to Berlin", "I live in Lisbon", age=-timedelta(minutes=1)), "newer"
    assert not undoes("I moved to Berlin", "I live in Lisbon", status="superseded")
    assert not undoes("I moved to Berlin", "I live in Lisbon", status="archived")
    assert undoes("I moved to Berlin", "I live in Lisbon", status="past")
    assert not undoes("I moved to Berlin", "I live in Lisbon", speaker="assistant"), "the bot's own words"
    assert not undoes("I'm not vegetarian anymore", "I'm vegetarian", speaker="assistant")
    found = detect("I moved to Berlin")
    assert found is not None
    itself = memory(7, "I moved to Berlin", age=timedelta(0))
    assert not contradicts(found, itself, itself)


def test_search_terms_find_the_candidates_to_check() -> None:
    moved, closed = detect("I moved to Berlin"), detect("The Blue Fox closed down")
    assert moved is not None and closed is not None
    assert {"live", "living", "moved"} <= set(search_terms(moved))
    assert search_terms(closed) == ["blue", "fox"]
