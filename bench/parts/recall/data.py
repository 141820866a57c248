"""A labelled set of long multi-session conversations, generated from a seed with no downloads.

Each person chats with the companion over many dated sessions. Most of what they say is small talk
and everyday chatter, with topical near-misses ("the pharmacy line was ridiculous today"). Now and
then they state a fact once ("Started lisinopril this week for my blood pressure"). Later questions
ask about those facts, either naming the fact's rare word ("What is the lisinopril for?") or in
other words ("which pills was I prescribed lately?"). Each question's gold evidence is the one turn
that states the fact.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from bench.parts.chatter import assistant_line, chatter_line, fill, user_line
from bench.parts.recall import facts_personal, facts_places
from bench.parts.recall.facts import SHARED, Family
from bot.core.text import query_terms

Speaker = Literal["user", "assistant"]
QuestionKind = Literal["keyed", "paraphrase"]
FAMILIES: tuple[Family, ...] = facts_personal.FAMILIES + facts_places.FAMILIES
_SLOT = re.compile(r"\{(\w+)\}")
START = datetime(2024, 1, 8, 19, 0, tzinfo=UTC)
NEAR_PER_FACT = 2
MENTION_CHANCE = 0.7
OTHERS_CHANCE = 0.8
# Shared slots whose values must differ between one person's facts, so each question has one answer.
UNIQUE_SHARED = frozenset({"first", "city"})


@dataclass(frozen=True, slots=True)
class ChatTurn:
    turn_id: str
    user_id: str
    session: int
    speaker: Speaker
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Question:
    qid: str
    user_id: str
    text: str
    gold: tuple[str, ...]  # turn ids that answer it
    kind: QuestionKind
    family: str


@dataclass(frozen=True, slots=True)
class Shape:
    users: int = 8
    sessions: int = 40
    facts: int = 30  # per person, each from a different family
    # Further facts of a kind the person already has (a second pet, another prescription).
    repeats: int = 8
    min_exchanges: int = 8  # user turns per session, each answered by the assistant
    max_exchanges: int = 18
    # Share of user messages that say several things at once, whatever else they hold.
    long_share: float = 0.4
    seed: int = 20240108


QUICK = Shape(users=3, sessions=12, facts=15, repeats=4)


@dataclass(frozen=True, slots=True)
class Dataset:
    shape: Shape
    turns: list[ChatTurn]
    questions: list[Question]

    def users(self) -> list[str]:
        return sorted({turn.user_id for turn in self.turns})

    def turns_of(self, user_id: str) -> list[ChatTurn]:
        return [turn for turn in self.turns if turn.user_id == user_id]

    def turn(self, turn_id: str) -> ChatTurn:
        return next(turn for turn in self.turns if turn.turn_id == turn_id)


@dataclass(frozen=True, slots=True)
class _Fact:
    family: Family
    values: Mapping[str, str]
    statement: str


@dataclass(slots=True)
class _Line:
    text: str
    fact: int | None = None  # index of the fact it states
    reply: str | None = None  # the companion's answer to it, if not a generic one


def generate(shape: Shape) -> Dataset:
    """The same shape and seed always give the same turns and questions."""
    rng = random.Random(shape.seed)
    turns: list[ChatTurn] = []
    questions: list[Question] = []
    for index in range(shape.users):
        user_turns, user_questions = _person(rng, f"person-{index:02d}", shape)
        turns += user_turns
        questions += user_questions
    return Dataset(shape, turns, questions)


def _person(rng: random.Random, user_id: str, shape: Shape) -> tuple[list[ChatTurn], list[Question]]:
    families = rng.sample(FAMILIES, min(shape.facts, len(FAMILIES)))
    repeatable = [family for family in families if family.repeatable and family.keyed]
    if repeatable:
        families += [rng.choice(repeatable) for _ in range(shape.repeats)]
    used: set[str] = set()
    facts = [_fact(rng, family, used) for family in families]
    several = {family.name for family in families if families.count(family) > 1}
    plan = _plan(rng, facts, families, shape.sessions, used)
    turns: list[ChatTurn] = []
    stated: dict[int, str] = {}
    day = START + timedelta(days=rng.randrange(30), minutes=rng.randrange(240))
    for session in range(shape.sessions):
        lines = plan[session]
        wanted = rng.randint(shape.min_exchanges, shape.max_exchanges)
        lines += [_Line(user_line(rng)) for _ in range(wanted - len(lines))]
        rng.shuffle(lines)
        at = day
        for line in lines:
            turn_id = f"{user_id}-s{session:03d}-t{len(turns):05d}"
            text = _ramble(rng, line.text) if rng.random() < shape.long_share else line.text
            turns.append(ChatTurn(turn_id, user_id, session, "user", text, at))
            if line.fact is not None:
                stated[line.fact] = turn_id
            at += timedelta(seconds=rng.randint(20, 90))
            reply_id = f"{user_id}-s{session:03d}-t{len(turns):05d}"
            reply = line.reply or assistant_line(rng)
            turns.append(ChatTurn(reply_id, user_id, session, "assistant", reply, at))
            at += timedelta(seconds=rng.randint(30, 240))
        day += timedelta(days=rng.randint(2, 10), minutes=rng.randint(-120, 120))
    questions = [
        question
        for number, fact in enumerate(facts)
        for question in _ask(rng, user_id, number, fact, stated[number])
        if question.kind == "keyed" or fact.family.name not in several
    ]
    return turns, questions


def _ramble(rng: random.Random, text: str) -> str:
    """One message that says several things: the line with everyday chatter before and/or after."""
    before, after = rng.choice(((True, False), (False, True), (True, True)))
    parts = [chatter_line(rng) if before else "", text, chatter_line(rng) if after else ""]
    return " ".join(part for part in parts if part)


def _fact(rng: random.Random, family: Family, used: set[str]) -> _Fact:
    referenced = _slots_in(family)
    values: dict[str, str] = {}
    for name, options in {**SHARED, **family.slots}.items():
        unique = name in referenced and (name in family.slots or name in UNIQUE_SHARED)
        fresh = [option for option in options if option not in used] if unique else list(options)
        values[name] = rng.choice(fresh or list(options))
        if unique:
            used.add(values[name])
    return _Fact(family, values, fill(rng.choice(family.statements), values))


def _slots_in(family: Family) -> set[str]:
    """Slots the fact and its questions use, also inside slot values ("a shelter in {city}")."""
    texts = [*family.statements, *family.keyed, *family.paraphrases, *family.mentions, *family.replies]
    texts += [value for options in family.slots.values() for value in options]
    return {name for text in texts for name in _SLOT.findall(text)}


def _plan(
    rng: random.Random, facts: Sequence[_Fact], chosen: Sequence[Family], sessions: int, used: set[str]
) -> dict[int, list[_Line]]:
    """Which session each fact and each of its distractors goes to."""
    plan: dict[int, list[_Line]] = defaultdict(list)
    for number, fact in enumerate(facts):
        family = fact.family
        session = rng.randrange(sessions)
        reply = fill(rng.choice(family.replies), fact.values) if family.replies else None
        plan[session].append(_Line(fact.statement, number, reply))
        for near in rng.sample(list(family.near), min(NEAR_PER_FACT, len(family.near))):
            plan[rng.randrange(sessions)].append(_Line(_fill_fresh(rng, near, family, used)))
        for other in family.others:
            if rng.random() < OTHERS_CHANCE:
                plan[rng.randrange(sessions)].append(_Line(_fill_fresh(rng, other, family, used)))
        for mention in family.mentions:
            if session + 1 < sessions and rng.random() < MENTION_CHANCE:
                plan[rng.randrange(session + 1, sessions)].append(_Line(fill(mention, fact.values)))
    # People talk about coffee and pharmacies without any fact about them too.
    for family in FAMILIES:
        if family not in chosen and rng.random() < 0.6:
            lines = [*family.near, *family.others]
            plan[rng.randrange(sessions)].append(_Line(_fill_fresh(rng, rng.choice(lines), family, used)))
    return plan


def _fill_fresh(rng: random.Random, template: str, family: Family, used: set[str]) -> str:
    """Fill with values no fact of this person uses, so a distractor never answers a question."""
    values: dict[str, str] = {}
    for name, options in {**SHARED, **family.slots}.items():
        fresh = [option for option in options if option not in used]
        values[name] = rng.choice(fresh or list(options))
    return fill(template, values)


def _ask(rng: random.Random, user_id: str, number: int, fact: _Fact, turn_id: str) -> list[Question]:
    asked: list[Question] = []
    kinds: tuple[tuple[QuestionKind, Sequence[str]], ...] = (
        ("keyed", fact.family.keyed),
        ("paraphrase", fact.family.paraphrases),
    )
    for kind, templates in kinds:
        if templates:
            text = fill(rng.choice(templates), fact.values)
            qid = f"{user_id}-q{number:02d}-{kind}"
            asked.append(Question(qid, user_id, text, (turn_id,), kind, fact.family.name))
    return asked


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)]
    return word


def shared_words(question: str, evidence: str) -> list[str]:
    """Content words (crudely stemmed) that a question and its evidence have in common."""
    asked = {_stem(term) for term in query_terms(question)}
    return sorted(asked & {_stem(term) for term in query_terms(evidence)})


def overlap_summary(data: Dataset) -> dict[str, float]:
    """Per question kind, the fraction of questions that share no content word with their evidence."""
    by_id = {turn.turn_id: turn.text for turn in data.turns}
    none: dict[str, list[bool]] = defaultdict(list)
    for question in data.questions:
        evidence = " ".join(by_id[turn_id] for turn_id in question.gold)
        none[question.kind].append(not shared_words(question.text, evidence))
    return {kind: round(sum(flags) / len(flags), 3) for kind, flags in sorted(none.items())}
