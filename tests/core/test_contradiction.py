"""Contradiction rules (core/memory/contradiction.py, core/memory/slots.py): which statements make
older memories untrue, and which older memories they make untrue. Pure: memories are built here, no store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.memory import slots
from bot.core.memory.contradiction import Contradiction, contradicts, detect, search_terms, untrue_sentences
from bot.core.memory.slots import Slot
from bot.core.models import Memory

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def memory(
    memory_id: int,
    text: str,
    *,
    speaker: str = "user",
    age: timedelta = timedelta(days=3),
    status: str = "active",
    kind: str = "fact",
) -> Memory:
    return Memory(memory_id, "ann", kind, text, speaker, NOW - age, "m", status=status)


def undoes(new: str, older: str, **kwargs: object) -> bool:
    found = detect(new)
    assert found is not None, new
    return contradicts(found, memory(100, new, age=timedelta(0)), memory(1, older, **kwargs))  # type: ignore[arg-type]


def said(new: str, older: str) -> bool:
    """Whether `new` undoes `older`, or says nothing that could undo anything."""
    found = detect(new)
    return found is not None and contradicts(found, memory(100, new, age=timedelta(0)), memory(1, older))


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        ("Luigi's closed down", ("luigi",)),
        ("Luigi’s closed down last week", ("luigi",)),
        ("Luigi's has closed for good.", ("luigi",)),
        ("Sad news: Luigi's has closed.", ("luigi",)),
        ("The Blue Fox closed its doors", ("blue", "fox")),
        ("The Blue Fox went out of business", ("blue", "fox")),
        ("Sadly The Blue Fox went out of business.", ("blue", "fox")),  # the opening word is no name
        ("Café Rio doesn't exist anymore", ("café", "rio")),
    ],
)
def test_a_closure_names_the_place(text: str, closed: tuple[str, ...]) -> None:
    assert detect(text) == Contradiction(closed=closed)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("I moved to Berlin", Slot("residence", "berlin", True, True)),
        ("i moved to berlin", Slot("residence", "berlin", True, True)),
        ("I've just moved to New York City!", Slot("residence", "new york city", True, True)),
        ("We just moved to Porto!", Slot("residence", "porto", True, True)),
        ("I've just relocated to Porto, still unpacking.", Slot("residence", "porto", True, True)),
        ("I moved back to Glasgow", Slot("residence", "glasgow", True, True)),
        ("I live in Lisbon now", Slot("residence", "lisbon", True, False)),
        ("I live in Lisbon", Slot("residence", "lisbon", True, False)),
        ("I've lived in Glasgow for six years.", Slot("residence", "glasgow", True, False)),
        ("I'm now based in São Paulo", Slot("residence", "são paulo", True, False)),
        ("I don't live in Rome any more", Slot("residence", "rome", False, True)),
        ("I moved away from Leeds", Slot("residence", "leeds", False, True)),
        ("I work at Umbrella Labs as a designer.", Slot("employer", "umbrella labs", True, False)),
        ("I got a new job at Globex", Slot("employer", "globex", True, True)),
        ("I no longer work at Acme.", Slot("employer", "acme", False, True)),
        ("I don't work at Stark Freight any more.", Slot("employer", "stark freight", False, True)),
        ("I quit my job.", Slot("employer", slots.ANY, False, True)),
        ("I got laid off", Slot("employer", slots.ANY, False, True)),
        ("I left Acme last month.", Slot("left", "acme", False, True)),
        ("My favourite bar is Casa Pepe now", Slot("favourite", "casa pepe", True, False, "bar")),
        ("I'm not vegetarian anymore", Slot("habit", "vegetarian", False, True)),
        ("I'm no longer a smoker", Slot("habit", "smok", False, True)),
        ("I quit smoking in spring.", Slot("habit", "smok", False, True)),
        ("I gave up smoking", Slot("habit", "smok", False, True)),
        ("I used to smoke", Slot("habit", "smok", False, True)),
        ("I don't eat meat any more", Slot("habit", "eat meat", False, True)),
        ("I no longer play the cello", Slot("habit", "cello play", False, True)),
        ("I started smoking again", Slot("habit", "smok", True, True)),
    ],
)
def test_news_about_the_person_is_read_as_a_slot(text: str, slot: Slot) -> None:
    found = detect(text)
    assert found is not None and slot in found.slots, found


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
        "I live in a flat now",  # no place named
        "I live in fear",
        "I'm not vegetarian",  # a state, not a change
        "I don't eat meat",
        "I moved the sofa",
        "I left early today",
        "I left Acme early today",  # left the building, not the job
        "I left Acme at 6",
        "I lived in Rome as a kid",  # history stays true
        "I'm vegetarian",  # a plain state undoes nothing
        "",
    ],
)
def test_ordinary_statements_contradict_nothing(text: str) -> None:
    assert detect(text) is None


@pytest.mark.parametrize(
    "text",
    [
        # Hypotheticals, wishes and plans: nothing has changed yet.
        "If I moved to Rome I'd be happy",
        "What if I moved to Rome?",
        "I might move to Rome",
        "I'd love to live in Rome",
        "I want to live in Rome one day",
        "I'm thinking of moving to Rome",
        "I'm moving to Rome next year",
        "Maybe I moved to the wrong city",
        "I wish I lived in Rome",
        "Imagine if I quit smoking",
        "I should quit smoking",
        "I'm trying to quit smoking",
        # A stay is not a home.
        "I'm living in Paris for the summer",
        "We're based in Lisbon this month",
        "I live in Rome for now, temporarily",
        # Other people's facts.
        "My sister lives in Paris",
        "My parents moved to Spain",
        "She moved to Rome",
        "Tom quit smoking last year",
        "My boss left Acme",
        # Reported speech: someone else's words, even about the person.
        "She said I live in Paris now",
        "My mum thinks I moved to Rome",
        'He told me "I moved to Rome"',
        # Questions say nothing about the person.
        "Do I still live in Glasgow?",
        "Did I tell you I moved to Rome?",
        "Should I quit smoking?",
        "Where do I work?",
    ],
)
def test_hostile_phrasings_contradict_nothing(text: str) -> None:
    assert detect(text) is None, detect(text)


@pytest.mark.parametrize(
    ("older", "expected"),
    [
        ("I live in Lisbon", True),
        ("I'm living in Paris", True),
        ("I'm based in New York", True),
        ("I moved to Lisbon in 2020", True),
        ("I live in Lisbon with my wife", True),
        ("I've lived in Glasgow for six years.", True),
        ("We live in Leeds", True),
        ("I live in Berlin", False),  # the same city
        ("i live in berlin", False),
        ("I moved to Berlin", False),  # the same news, said before
        ("I lived in Rome as a kid", False),  # history stays true
        ("I live in a flat", False),  # no place named
        ("I like Berlin", False),
        ("My sister lives in Madrid", False),
        ("If I lived in Madrid I'd cycle more", False),
        ("I work at Acme", False),  # another attribute
    ],
)
def test_a_move_undoes_residence_in_another_city(older: str, expected: bool) -> None:
    assert undoes("I moved to Berlin last year", older) is expected


@pytest.mark.parametrize(
    ("new", "older", "expected"),
    [
        ("I live in Lyon", "I live in Paris", True),  # a new value of a one-value attribute
        ("I live in Lyon", "My sister lives in Paris", False),
        ("My sister lives in Lyon", "I live in Paris", False),
        ("I left Glasgow", "I live in Glasgow with my partner", True),
        ("I don't live in Rome any more", "I live in Rome", True),
        ("I don't live in Rome any more", "I live in Milan", False),
        ("I moved back to Rome", "I don't live in Rome any more", True),
    ],
)
def test_residence(new: str, older: str, expected: bool) -> None:
    assert said(new, older) is expected


@pytest.mark.parametrize(
    ("new", "older", "expected"),
    [
        ("I live in Scotland", "I live in Glasgow", False),  # Glasgow is in Scotland
        ("I live in Glasgow", "I live in Scotland", False),
        ("I live in Northern Ireland now", "I live in Belfast", False),
        ("I live in France", "I live in Scotland", True),  # another region
        ("I live in Leeds", "I live in Glasgow", True),  # another city
        ("We moved to Scotland", "I live in Glasgow", True),  # news of a move still undoes
        ("I left Scotland", "I live in Scotland", True),
    ],
)
def test_a_region_and_a_city_can_both_be_true(new: str, older: str, expected: bool) -> None:
    assert said(new, older) is expected


def test_same_city_however_it_is_spelled() -> None:
    assert not undoes("I moved to Lisbon", "I live in Lisbon with my wife")
    assert not said("I moved to new york", "I live in New York City")
    assert undoes("I moved to New York", "I live in New Delhi")
    assert slots.same_value("new york", "new york city")
    assert not slots.same_value("san diego", "san francisco")


@pytest.mark.parametrize(
    ("new", "older", "expected"),
    [
        ("I left Acme last month.", "I work at Acme as a designer.", True),
        ("I left Acme last month.", "I work at Globex", False),
        ("I no longer work at Acme.", "I work at Acme, mostly on the mobile app.", True),
        ("I quit my job", "I work at Acme", True),
        ("I got a new job at Globex", "I work at Acme", True),
        ("I work at Globex", "I work at Acme", True),
        ("I work at Acme", "I work at Acme as a designer", False),
        ("I left Acme early today", "I work at Acme", False),
        ("My brother left Acme", "I work at Acme", False),
        ("I left Acme", "My wife works at Acme", False),
    ],
)
def test_work(new: str, older: str, expected: bool) -> None:
    assert said(new, older) is expected


@pytest.mark.parametrize(
    ("new", "older", "expected"),
    [
        ("I'm not vegetarian anymore", "I'm vegetarian", True),
        ("I'm not vegetarian anymore", "I am a vegetarian", True),
        ("I'm not vegetarian anymore", "I'm vegetarian, I don't eat meat at all.", True),
        ("I'm not vegetarian anymore", "I'm not vegetarian", False),  # already agrees
        ("I'm not vegetarian anymore", "My sister is vegetarian", False),  # not about the person
        ("I don't eat meat any more", "I eat meat every day", True),
        ("I don't eat meat any more", "I never eat meat", False),
        ("I don't eat meat any more", "I don't eat meat", False),
        ("I'm no longer a smoker", "I'm a smoker, sadly", True),
        ("I'm no longer a smoker", "I like tea", False),
        ("I quit smoking in spring.", "I'm a smoker, about ten a day.", True),
        ("I quit smoking", "I'm a heavy smoker", True),
        ("I quit smoking", "I used to smoke", False),  # the two agree
        ("I used to smoke", "I quit smoking", False),
        ("I used to smoke", "I'm a smoker", True),
        ("I quit smoking", "My dad is a smoker", False),
        ("I quit smoking", "I smoked a cigar at the wedding", False),  # an event stays true
        ("I started smoking again", "I quit smoking", True),
        ("I don't play the cello any more", "I play the cello in a community orchestra.", True),
        ("I don't play the cello any more", "I play the violin", False),
        ("I no longer play tennis", "I played tennis with Tom yesterday", False),
    ],
)
def test_habits(new: str, older: str, expected: bool) -> None:
    assert said(new, older) is expected


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


def test_favourites_have_one_value() -> None:
    assert said("My favourite restaurant is Casa Pepe", "My favourite restaurant is Luigi's, great pasta")
    assert not said("My favourite restaurant is Casa Pepe", "My favourite band is Blur")
    assert not said("My favourite restaurant is Casa Pepe", "My favourite restaurant is Casa Pepe")


def test_only_older_recallable_memories_of_the_person_are_undone() -> None:
    assert not undoes("I moved to Berlin", "I live in Lisbon", age=-timedelta(minutes=1)), "newer"
    assert not undoes("I moved to Berlin", "I live in Lisbon", status="superseded")
    assert not undoes("I moved to Berlin", "I live in Lisbon", status="archived")
    assert undoes("I moved to Berlin", "I live in Lisbon", status="past")
    assert not undoes("I moved to Berlin", "I live in Lisbon", speaker="assistant"), "the bot's own words"
    assert not undoes("I moved to Berlin", "You live in Lisbon", speaker="assistant")
    assert not undoes("I'm not vegetarian anymore", "I'm vegetarian", speaker="assistant")
    assert not undoes("I moved to Berlin", "2026-03-01: I live in Lisbon", kind="summary"), "revised instead"
    found = detect("I moved to Berlin")
    assert found is not None
    itself = memory(7, "I moved to Berlin", age=timedelta(0))
    assert not contradicts(found, itself, itself)


def test_a_summary_loses_only_its_untrue_sentences() -> None:
    found = detect("We just moved to Porto!")
    assert found is not None
    sentences = ["I live in Glasgow, in a small flat.", "My sister lives in Paris.", "I love hiking."]
    assert untrue_sentences(found, sentences) == [0]
    closed = detect("Luigi's closed down")
    assert closed is not None
    assert untrue_sentences(closed, ["We always go to Luigi's on Fridays.", "I like Mario's."]) == [0]


def test_search_terms_find_the_candidates_to_check() -> None:
    moved, closed = detect("I moved to Berlin"), detect("The Blue Fox closed down")
    left = detect("I left Acme")
    assert moved is not None and closed is not None and left is not None
    assert {"live", "living", "moved", "berlin"} <= set(search_terms(moved))
    assert search_terms(closed) == ["blue", "fox"]
    assert {"work", "live", "acme"} <= set(search_terms(left))
