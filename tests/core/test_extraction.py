"""Candidate extraction (core/memory/extraction.py): the rules over many phrasings, the dates they read,
and the checks a model's output must pass before anything of it is stored. Pure: no store."""

from __future__ import annotations

import json
from datetime import date

import pytest

from bot.core.errors import InferenceTimeout
from bot.core.memory.extraction import (
    MAX_CANDIDATES,
    Candidate,
    combine,
    event_date,
    is_pin,
    model_candidates,
    parse_model_output,
    rule_candidates,
)
from bot.core.memory.kinds import MAX_STATEMENT_CHARS
from tests.support.fakes import ScriptedInference

WEDNESDAY = date(2026, 3, 4)
MESSAGE = "I just adopted a cat named Miso, and I work as a nurse at the city hospital."


def only(text: str) -> Candidate:
    [candidate] = rule_candidates(text, WEDNESDAY)
    return candidate


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I like green tea.", "preference"),
        ("i really like long walks", "preference"),
        ("I love hiking", "preference"),
        ("I hate olives", "preference"),
        ("I really can't stand jazz.", "preference"),
        ("I don't like coffee", "preference"),
        ("My favourite colour is blue", "preference"),
        ("I'm a big fan of Studio Ghibli", "preference"),
        ("I am a nurse.", "fact"),
        ("I'm vegetarian", "fact"),
        ("I'm allergic to peanuts.", "fact"),
        ("My dog is called Rex.", "fact"),
        ("My sister's name is Ana", "fact"),
        ("I live in Lisbon", "fact"),
        ("I have two cats", "fact"),
        ("My exam is tomorrow", "event"),
    ],
)
def test_a_single_statement_is_one_whole_candidate_of_its_kind(text: str, kind: str) -> None:
    candidate = only(text)
    assert (candidate.kind, candidate.text, candidate.source) == (kind, text, "rule")
    assert candidate.whole and not candidate.pinned


@pytest.mark.parametrize(
    "text", ["What's up?", "ok cool", "Do you like tea?", "haha", "I am going home", "x" * 300, ""]
)
def test_questions_chatter_and_long_pastes_are_not_statements(text: str) -> None:
    assert rule_candidates(text, WEDNESDAY) == []


def test_each_statement_of_a_longer_message_is_its_own_candidate() -> None:
    found = rule_candidates("I love hiking. The weather is nice! My favourite colour is blue.", WEDNESDAY)
    assert [(c.kind, c.text) for c in found] == [
        ("preference", "I love hiking."),
        ("preference", "My favourite colour is blue."),
    ]
    assert not any(c.whole for c in found), "a part is not the whole message"


def test_a_message_yields_at_most_max_candidates() -> None:
    text = " ".join(f"I like food number {n}." for n in range(MAX_CANDIDATES + 4))
    assert len(rule_candidates(text, WEDNESDAY)) == MAX_CANDIDATES


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("Remember that my locker code is 4411", "My locker code is 4411"),
        ("remember that I park on level 3", "I park on level 3"),
        ("please remember: the wifi password is hunter2", "The wifi password is hunter2"),
        ("Don't forget that Ana's flight lands at noon", "Ana's flight lands at noon"),
        ("note: the spare key is under the pot", "The spare key is under the pot"),
    ],
)
def test_remember_that_pins_even_what_no_rule_would_keep(text: str, statement: str) -> None:
    assert is_pin(text)
    candidate = only(text)
    assert candidate.pinned and candidate.text == statement
    assert candidate.kind in {"fact", "preference", "event"}
    assert not candidate.whole, "the pinned statement is not the message's own wording"


def test_remember_that_keeps_its_kind_when_a_rule_knows_it() -> None:
    assert only("Remember that I hate mushrooms").kind == "preference"
    assert only("remember that my exam is tomorrow").event_date == date(2026, 3, 5)
    assert not is_pin("I remember the old house") and not is_pin("Do you remember me?")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My exam is on 2026-05-14.", date(2026, 5, 14)),
        ("Her wedding is on 2025-06-01", date(2025, 6, 1)),  # an ISO date says its own year
        ("My birthday is 5 December", date(2026, 12, 5)),
        ("The party is on the 5th of December", date(2026, 12, 5)),
        ("Party on Dec 5th", date(2026, 12, 5)),
        ("my appointment is march 10", date(2026, 3, 10)),
        ("Dinner with Ana on 1 March", date(2027, 3, 1)),  # gone this year: the next one
        ("My trip was on 1 March", date(2026, 3, 1)),  # said in the past tense: this year's
        ("My exam is today", WEDNESDAY),
        ("Dinner tonight with Ana", WEDNESDAY),
        ("My exam is tomorrow", date(2026, 3, 5)),
        ("I saw a film yesterday", date(2026, 3, 3)),
        ("I start the new job next week", date(2026, 3, 11)),
        ("I was ill last week", date(2026, 2, 25)),
        ("My exam is on Friday", date(2026, 3, 6)),
        ("My exam is this Friday", date(2026, 3, 6)),
        ("My exam is on Monday", date(2026, 3, 9)),
        ("I went to the dentist on Monday", date(2026, 3, 2)),
        ("I visited my mum on Monday", date(2026, 3, 2)),
        ("last Friday was fun", date(2026, 2, 27)),
        ("I got married on Saturday", date(2026, 2, 28)),
        ("I'm getting married on Saturday", date(2026, 3, 7)),  # "married" after "getting": not past
        ("I need to see the doctor on Monday", date(2026, 3, 9)),  # "need" is no past tense
        ("My flight is booked for 1 March", date(2027, 3, 1)),  # a state, not a past event
        ("My exam is next Wednesday", date(2026, 3, 11)),  # said on a Wednesday: a week on
    ],
)
def test_event_dates_are_read_from_the_usual_forms(text: str, expected: date) -> None:
    assert event_date(text, WEDNESDAY) == expected


def test_next_friday_is_a_friday_to_come() -> None:
    found = event_date("My interview is next Friday", WEDNESDAY)
    assert found is not None and found.weekday() == 4 and found > WEDNESDAY


@pytest.mark.parametrize(
    "text", ["The party is on 31 February", "It happened on 2026-02-30", "see you on 2026-13-01"]
)
def test_impossible_dates_give_no_date(text: str) -> None:
    assert event_date(text, WEDNESDAY) is None


def test_an_event_candidate_carries_its_date_and_other_kinds_none() -> None:
    assert only("My exam is on 2026-05-14").event_date == date(2026, 5, 14)
    assert only("The party is on 31 February").kind == "event"
    assert only("The party is on 31 February").event_date is None
    assert only("I like tea").event_date is None
    assert event_date("I like tea", WEDNESDAY) is None


def line(kind: str, text: str, **extra: object) -> str:
    return json.dumps({"kind": kind, "text": text, **extra})


def test_model_output_as_json_lines() -> None:
    raw = (
        line("fact", "adopted a cat named Miso")
        + "\n"
        + line("fact", "works as a nurse at the city hospital")
    )
    found = parse_model_output(raw, MESSAGE)
    assert [(c.kind, c.text, c.source) for c in found] == [
        ("fact", "adopted a cat named Miso", "model"),
        ("fact", "works as a nurse at the city hospital", "model"),
    ]
    assert not any(c.pinned or c.whole for c in found)


def test_model_output_as_one_array_and_with_prose_around() -> None:
    array = json.dumps([{"kind": "fact", "text": "adopted a cat named Miso"}])
    assert [c.text for c in parse_model_output(array, MESSAGE)] == ["adopted a cat named Miso"]
    chatty = f"Sure! Here you go:\n{line('fact', 'adopted a cat named Miso')},\nHope this helps."
    assert [c.text for c in parse_model_output(chatty, MESSAGE)] == ["adopted a cat named Miso"]


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "[]",
        "lol no idea {{{ [",
        '{"kind": "fact", "text": "adopted a cat named Miso"',  # cut off mid-object
        '"just a string"',
        "42",
        '{"kind": "fact", "text": 5}',
        '{"kind": "fact"}',
        '{"text": "adopted a cat named Miso"}',
        line("opinion", "adopted a cat named Miso"),  # not one of the kinds
        line("turn", "adopted a cat named Miso"),
        line("fact", "adopted a cat named Miso", confidence=0.9),  # keys outside the schema
        line("fact", "a cat"),  # too short to be a statement
        line("fact", "cat named Miso " * 25),  # too long
        line("fact", "owns a red sports car in Paris"),  # nothing of it was said: an invention
        line("preference", "likes dogs named Rex"),
        line("fact", "the a an of"),  # no content words at all
    ],
)
def test_model_output_that_fails_the_schema_or_grounding_is_dropped(raw: str) -> None:
    assert parse_model_output(raw, MESSAGE) == []


def test_good_lines_survive_among_bad_ones_and_twins_collapse() -> None:
    raw = "\n".join(
        [
            "garbage",
            line("fact", "owns a red sports car in Paris"),
            line("fact", "adopted a   cat named Miso"),
            line("fact", "Adopted a cat named Miso"),
            '{"kind": "fact", "text": "works as a nurse", "extra": 1}',
            line("event", "adopted a cat named Miso just now"),
        ]
    )
    found = parse_model_output(raw, MESSAGE)
    assert [(c.kind, c.text) for c in found] == [
        ("fact", "adopted a cat named Miso"),
        ("event", "adopted a cat named Miso just now"),
    ]


def test_model_text_at_the_length_limits() -> None:
    message = "word " * 80
    assert parse_model_output(line("fact", "word" * 2), "word" * 2) == [
        Candidate("fact", "wordword", "model")
    ]
    assert parse_model_output(line("fact", "w" * 7), "w" * 7) == []
    longest = ("word " * 56).strip()[:MAX_STATEMENT_CHARS]
    assert len(parse_model_output(line("fact", longest), message)) == 1
    assert parse_model_output(line("fact", longest + " word"), message) == []


async def test_model_candidates_asks_the_model_and_keeps_the_grounded() -> None:
    raw = line("fact", "adopted a cat named Miso") + "\nnonsense\n" + line("fact", "owns a yacht in Monaco")
    model = ScriptedInference(raw)
    found = await model_candidates(model, MESSAGE)
    assert [c.text for c in found] == ["adopted a cat named Miso"]
    [prompt] = model.prompts
    assert [m.role for m in prompt] == ["system", "user"] and prompt[1].content == MESSAGE


async def test_model_candidates_lets_a_model_failure_through() -> None:
    with pytest.raises(InferenceTimeout):
        await model_candidates(ScriptedInference(fail_with=InferenceTimeout("slow")), MESSAGE)


def test_combine_puts_rules_first_and_drops_model_restatements() -> None:
    message = "I like green tea. I work as a nurse. I adopted a cat named Miso."
    rules = rule_candidates(message, WEDNESDAY)
    model = parse_model_output(
        "\n".join(
            [
                line("preference", "likes green tea"),
                line("fact", "works as a nurse"),
                line("fact", "adopted a cat named Miso"),
            ]
        ),
        message,
    )
    assert len(model) == 3
    kept = combine(rules, model)
    assert [(c.source, c.text) for c in kept] == [
        ("rule", "I like green tea."),
        ("rule", "I work as a nurse."),
        ("model", "adopted a cat named Miso"),
    ]


def test_combine_drops_model_twins_and_respects_the_cap() -> None:
    model = [Candidate("fact", "adopted a cat named Miso", "model")] * 2
    assert combine([], model) == model[:1]
    rules = [Candidate("preference", f"I like food number {n}", "rule") for n in range(MAX_CANDIDATES)]
    assert combine(rules, [Candidate("fact", "adopted a cat named Miso", "model")]) == rules
    assert combine([], []) == []
