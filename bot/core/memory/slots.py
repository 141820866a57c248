"""What a statement says about the person, as (attribute, value, holds) slots, by rules.

"I live in Glasgow" is (residence, glasgow, holds); "we moved to Porto" is (residence, porto,
holds, a change); "I left Acme" is (left, acme, not any more); "I quit smoking" is (habit,
{smok}, not any more, a change). `contradiction.py` compares a new statement's slots with an
older memory's to decide whether the older one is still true.

Precision first: a wrong slot hides a true memory. So a slot is read only from a clause whose
subject is the person ("I", for a residence also "we"), with the verb right after it (so "I might
move to Rome" and "I'd love to live in Rome" say nothing), in a sentence that is not a question,
and not after a condition or a report ("if I moved to Rome", "she said I live in Rome").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.core.text import query_terms

Attribute = Literal["residence", "employer", "left", "habit", "favourite"]
ANY = "*"  # "I quit my job": whatever the employer was

# A name: capitalised words ("New York City", "Umbrella Labs", "Luigi's"), never an article.
_NAME = r"(?-i:(?!(?:The|A|An|My|Our|His|Her|Their|This|That)\b)[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*)*)"
# A place may be written in lowercase when the whole message is ("i moved to berlin").
_PLACE = (
    r"(?!(?:an?|the|my|our|his|her|their|this|that|here|there|with|for)\b)"
    r"[^\W\d_][\w'’-]*(?-i:(?:\s+[A-Z][\w'’-]*)*)"
)
_ADVERBS = r"(?:(?:just|finally|recently|now|actually|officially|still|already|also|currently)\s+)*"
_ME = r"\bi"
_US = r"\b(?:i|we)"
_HAVE = r"(?:'ve|\s+have)?"
_ANY_MORE = r"\s+any\s?more\b"

_RESIDENCE = (
    # (pattern, holds, change)
    (rf"{_US}{_HAVE}\s+{_ADVERBS}(?:moved|relocated)\s+(?:back\s+)?to\s+(?P<v>{_PLACE})", True, True),
    (rf"{_US}(?:'re|'m|\s+am|\s+are)\s+{_ADVERBS}(?:living|based)\s+in\s+(?P<v>{_PLACE})", True, False),
    (rf"{_US}\s+{_ADVERBS}live\s+in\s+(?P<v>{_PLACE})", True, False),
    (
        rf"{_US}(?:'ve|\s+have)\s+{_ADVERBS}(?:lived|been\s+living)\s+in\s+(?P<v>{_PLACE})"
        r"(?=[^.!?;]*\b(?:for|since)\b)",
        True,
        False,
    ),  # still there: "for six years", "since 2019"
    (rf"{_US}\s+(?:don'?t|do\s+not|no\s+longer)\s+live\s+in\s+(?P<v>{_PLACE})(?={_ANY_MORE})", False, True),
    (rf"{_US}\s+no\s+longer\s+live\s+in\s+(?P<v>{_PLACE})", False, True),
    (rf"{_US}\s+(?:don'?t|do\s+not)\s+live\s+in\s+(?P<v>{_PLACE})", False, False),
    (rf"{_US}\s+used\s+to\s+live\s+in\s+(?P<v>{_PLACE})", False, True),
    (rf"{_US}{_HAVE}\s+{_ADVERBS}moved\s+(?:away\s+from|out\s+of)\s+(?P<v>{_PLACE})", False, True),
)
_EMPLOYER = (
    (rf"{_ME}\s+{_ADVERBS}work\s+(?:at|for)\s+(?P<v>{_NAME})", True, False),
    (rf"{_ME}\s+{_ADVERBS}work\s+as\s+(?:an?\s+)?[\w -]+?\s+(?:at|for)\s+(?P<v>{_NAME})", True, False),
    (rf"{_ME}(?:'m|\s+am)\s+{_ADVERBS}working\s+(?:at|for)\s+(?P<v>{_NAME})", True, False),
    (
        rf"{_ME}{_HAVE}\s+{_ADVERBS}(?:started|begun|began)\s+(?:a\s+new\s+job\s+|working\s+)?(?:at|with|for)"
        rf"\s+(?P<v>{_NAME})",
        True,
        True,
    ),
    (rf"{_ME}{_HAVE}\s+{_ADVERBS}got\s+a\s+(?:new\s+)?job\s+(?:at|with)\s+(?P<v>{_NAME})", True, True),
    (rf"{_ME}{_HAVE}\s+{_ADVERBS}joined\s+(?P<v>{_NAME})", True, True),
    (
        rf"{_ME}\s+(?:don'?t|do\s+not|no\s+longer)\s+work\s+(?:at|for)\s+(?P<v>{_NAME})(?={_ANY_MORE})",
        False,
        True,
    ),
    (rf"{_ME}\s+no\s+longer\s+work\s+(?:at|for)\s+(?P<v>{_NAME})", False, True),
    (rf"{_ME}\s+used\s+to\s+work\s+(?:at|for)\s+(?P<v>{_NAME})", False, True),
    (rf"{_ME}{_HAVE}\s+{_ADVERBS}(?:quit|left|lost)\s+my\s+job\b", False, True),
    (
        rf"{_ME}{_HAVE}\s+{_ADVERBS}(?:was|got|been)\s+(?:laid\s+off|fired|made\s+redundant)\b"
        rf"(?:\s+(?:from|by)\s+(?P<v>{_NAME}))?",
        False,
        True,
    ),
)
# "I left Acme", "I quit Globex": a workplace or a home, whichever an older memory says it was.
# Not leaving for the day ("I left Acme early", "at 6").
_LEFT = re.compile(
    rf"{_ME}{_HAVE}\s+{_ADVERBS}(?:left|quit)\s+(?P<v>{_NAME})\b"
    r"(?!\s+(?:early|late|at|around|by|before|after|today|tonight|this|for|to|with|behind|alone|in\s+a)\b)",
    re.I,
)
_FAVOURITE = re.compile(
    rf"\bmy\s+(?:new\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are)\s+(?:now\s+)?(?P<v>{_NAME})",
    re.I,
)

_STATE_WORDS = r"(?P<k>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)"
# A habit's words, up to where the sentence turns to when or where ("in spring", "most evenings").
_OBJECT = (
    r"(?!(?:in|on|at|for|last|this|that|it|them|him|her|when|because|years?|ago|recently|yesterday|today)\b)"
    r"(?P<k>[a-z][\w-]*(?:\s+(?!(?:and|but|with|in|at|on|every|most|since|for|because|so)\b)[a-z][\w-]*){0,3})"
)
_HABITS = (
    (rf"{_ME}(?:'m|\s+am)\s+(?:not|no\s+longer)\s+(?:an?\s+)?{_STATE_WORDS}(?={_ANY_MORE})", False, True),
    (rf"{_ME}(?:'m|\s+am)\s+no\s+longer\s+(?:an?\s+)?{_STATE_WORDS}", False, True),
    (rf"{_ME}\s+(?:don'?t|do\s+not|no\s+longer)\s+{_OBJECT}(?={_ANY_MORE})", False, True),
    (rf"{_ME}\s+no\s+longer\s+{_OBJECT}", False, True),
    (
        rf"{_ME}{_HAVE}\s+{_ADVERBS}(?:quit|stopped|gave\s+up|given\s+up|kicked)\s+(?!my\s+job\b){_OBJECT}",
        False,
        True,
    ),
    (rf"{_ME}\s+used\s+to\s+(?:be\s+(?:an?\s+)?)?{_OBJECT}", False, True),
    (
        rf"{_ME}{_HAVE}\s+{_ADVERBS}(?:started|took\s+up|taken\s+up|picked\s+up)\s+{_OBJECT}\s+again\b",
        True,
        True,
    ),
    (rf"{_ME}(?:'m|\s+am)\s+(?:an?\s+)?{_STATE_WORDS}\s+again\b", True, True),
    (rf"{_ME}\s+{_OBJECT}\s+again\b", True, True),
    (rf"{_ME}(?:'m|\s+am)\s+(?:not|never)\s+(?:an?\s+)?{_STATE_WORDS}", False, False),
    (rf"{_ME}\s+(?:don'?t|do\s+not|never)\s+{_OBJECT}", False, False),
    (rf"{_ME}(?:'m|\s+am)\s+(?:an?\s+)?{_STATE_WORDS}", True, False),
    (rf"{_ME}\s+(?:still\s+|usually\s+|always\s+|often\s+)?{_OBJECT}", True, False),
)

# Words before the subject that make the clause no statement of fact: a condition, a wish, or
# someone else's report ("if I moved to Rome", "she said I live in Paris").
_GUARDS = re.compile(
    r"\b(?:if|when|whenever|unless|whether|once|until|till|suppose|supposing|imagine|pretend|maybe|"
    r"perhaps|dream\w*|said|says|say|saying|told|tells|tell|telling|asked|asks|ask|think|thinks|thought|"
    r"believes?|claims?|claimed|wish\w*|hope\w*|that|than|like)\b|[\"“”«»]",
    re.I,
)
_TEMPORARY = re.compile(
    r"\b(?:for\s+(?:the|a|this|two|three|a\s+few|a\s+couple\s+of)?\s*(?:summer|winter|spring|autumn|"
    r"week|weekend|month|days|weeks|months|semester|term|now)|this\s+(?:week|month|summer)|"
    r"on\s+(?:holiday|vacation)|temporarily)\b",
    re.I,
)
_QUESTION_START = re.compile(
    r"^\W*(?:do|does|did|am|is|are|was|were|should|would|could|can|will|shall|have|has|may|might|where|"
    r"what|why|how|when|who|which)\b",
    re.I,
)
_CLAUSE_END = re.compile(r"\s*(?:[,;:()]|\bbut\b|\band\s+(?=i\b|we\b)|\s-\s)\s*", re.I)
# A first word that is no habit: a verb of saying, feeling or seeming, a modal, or a past tense.
_NOT_HABIT_VERBS = frozenset(
    "think thought guess feel felt hope wish want wanted need needed mean meant know knew see saw "
    "love like hate prefer enjoy wonder bet suppose reckon believe say said tell told ask asked will "
    "would could should might may must can shall am was were had did went got made took came left "
    "ate drank ran swam rode wrote sang bought found gave kept met paid put sat slept spent "
    "just really also actually totally kind sort have has do does dont can't cant won't wont "
    "moved live lived work worked quit stopped started gave".split()
)
_FILLER = frozenset("a an the my some any more at all about mostly really still now again just too".split())


@dataclass(frozen=True, slots=True)
class Slot:
    """One thing a statement says about the person.

    `value`: the place or name in lowercase words, ANY for "my job", the stems of the habit's
    words for a habit. `holds`: whether it is so now. `change`: the statement is news of a change
    ("moved", "quit", "no longer"), not a plain state."""

    attribute: Attribute
    value: str
    holds: bool
    change: bool
    what: str = ""  # for a favourite: of what ("restaurant", "band")


def read(text: str) -> list[Slot]:
    """Every slot the statement's clauses say about the person, in order."""
    found: list[Slot] = []
    lowercase_only = not any(c.isupper() for c in text)
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text.replace("’", "'")):
        if not sentence.strip() or sentence.rstrip().endswith("?") or _QUESTION_START.match(sentence):
            continue
        for clause in _CLAUSE_END.split(sentence):
            found += [s for s in _clause_slots(clause, lowercase_only) if s not in found]
    return found


def _clause_slots(clause: str, lowercase_only: bool) -> list[Slot]:
    slots: list[Slot] = []
    for attribute, rules in (("residence", _RESIDENCE), ("employer", _EMPLOYER)):
        for pattern, holds, change in rules:
            match = re.search(pattern, clause, re.I)
            if match is None or _guarded(clause, match.start()):
                continue
            value = match.groupdict().get("v") or ANY
            if attribute == "residence" and not (value[:1].isupper() or lowercase_only):
                continue  # "I live in fear" names no place
            if attribute == "residence" and _TEMPORARY.search(clause):
                continue  # a stay, not a home: "I'm living in Paris for the summer"
            slots.append(Slot(attribute, _words(value), holds, change))  # type: ignore[arg-type]
            break
    if not slots and (match := _LEFT.search(clause)) and not _guarded(clause, match.start()):
        slots.append(Slot("left", _words(match["v"]), False, True))
    if (match := _FAVOURITE.search(clause)) and not _guarded(clause, match.start()):
        slots.append(Slot("favourite", _words(match["v"]), True, False, " ".join(stems(match["what"]))))
    if not slots:
        slots += _habit(clause)
    return slots


def _habit(clause: str) -> list[Slot]:
    for pattern, holds, change in _HABITS:
        match = re.search(pattern, clause, re.I)
        if match is None or _guarded(clause, match.start()):
            continue
        words = match["k"].lower().split()
        if not words or (words[0] in _NOT_HABIT_VERBS and not change) or words[0].endswith("ed"):
            return []  # "I think …", "I'd …", "I walked …": no habit, and no other reading either
        key = stems(" ".join(words))
        return [Slot("habit", " ".join(sorted(key)), holds, change)] if key else []
    return []


def _guarded(clause: str, start: int) -> bool:
    return bool(_GUARDS.search(clause[:start]))


def _words(value: str) -> str:
    return " ".join(value.replace("'s", "").lower().split())


def stems(text: str) -> set[str]:
    """Content words cut to a rough stem, so "smoker", "smoking" and "smokes" meet at "smok"."""
    found: set[str] = set()
    for word in query_terms(text):
        if word in _FILLER:
            continue
        for suffix in ("ing", "ers", "er", "ed", "es", "s", "e"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
                word = word[: -len(suffix)]
                break
        if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
            word = word[:-1]  # running → runn → run
        found.add(word)
    return found


def same_value(one: str, other: str) -> bool:
    """ "new york" and "new york city" name one place; "new york" and "new delhi" do not."""
    if ANY in (one, other):
        return True
    a, b = one.split(), other.split()
    return a[: len(b)] == b[: len(a)]


def same_habit(one: str, other: str) -> bool:
    """One habit's words contain the other's: "smok" is the habit of "heavi smok"."""
    a, b = set(one.split()), set(other.split())
    return bool(a and b) and (a <= b or b <= a)
