"""Statements that make older memories untrue: "Luigi's closed down", "I moved to Berlin",
"I'm not vegetarian any more". By rules: a 135M model cannot be trusted to judge this, and a wrong
supersession hides a true memory, so each rule is narrow and names what it replaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.core.models import Memory
from bot.core.text import query_terms

Reason = Literal["closed", "moved", "no_longer"]

_NAME = r"[A-Z][\w'’&-]*(?:\s+(?:[A-Z][\w'’&-]*|de|di|la|le|of|the|and|&))*"
_CLOSED = re.compile(
    rf"(?P<subject>{_NAME})\s+(?:has\s+|have\s+|is\s+|was\s+|got\s+|just\s+|finally\s+)*"
    # Closed for good, not for the day ("closed early today") nor closing a thing ("closed the door").
    r"(?:(?:closed|shut)\s+(?:down|for\s+good|permanently|its\s+doors)\b(?!\s+(?:the|an?|my|his|her|"
    r"their|our|your|it|this|that)\b)|closed\s*[.!]*$)"
    rf"|(?P<subject2>{_NAME})\s+(?:went|has\s+gone|is\s+going)\s+out\s+of\s+business"
    rf"|(?P<subject3>{_NAME})\s+(?:doesn'?t|does\s+not|no\s+longer)\s+exists?\b"
)
# A place: its first word in any case ("i moved to berlin"), then only capitalised ones ("New York
# City", not "Berlin last year"); never an article or pronoun ("I live in a flat").
_PLACE = r"(?!(?:an?|the|my|our|his|her|their|this|that)\b)[^\W\d_][\w-]*(?-i:(?:\s+[A-Z][\w-]*)*)"
_MOVED = re.compile(
    rf"\bi(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?(?:moved|relocated)\s+to\s+(?P<place>{_PLACE})"
    rf"|\bi\s+(?:now\s+)?live\s+in\s+(?P<place2>{_PLACE})\s+now\b"
    rf"|\bi(?:'m|\s+am)\s+now\s+(?:living|based)\s+in\s+(?P<place3>{_PLACE})",
    re.IGNORECASE,
)
_RESIDENCE = re.compile(
    rf"\bi(?:'m|\s+am)?\s*(?:live|living|based|moved|relocated)\s+(?:in|to)\s+(?P<place>{_PLACE})",
    re.IGNORECASE,
)
_NO_LONGER = re.compile(
    r"\bi(?:'m|\s+am)\s+(?:no\s+longer|not)\s+(?:a\s+|an\s+)?(?P<state>[\w' -]+?)\s+any\s?more\b"
    r"|\bi(?:'m|\s+am)\s+no\s+longer\s+(?:a\s+|an\s+)?(?P<state2>[\w' -]+?)[.!]*$"
    r"|\bi\s+(?:don'?t|do\s+not|no\s+longer)\s+(?P<habit>[\w' -]+?)(?:\s+any\s?more)[.!]*$"
    r"|\bi\s+no\s+longer\s+(?P<habit2>[\w' -]+?)[.!]*$",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\bi\b", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|no\s+longer|any\s?more|\w+n't|don'?t|doesn'?t)\b", re.I)
# The closing of a generic word is not a name: "The door closed", "It shut down".
_NOT_NAMES = frozenset({"it", "the", "that", "this", "he", "she", "they", "we", "i", "door", "window"})


@dataclass(frozen=True, slots=True)
class Contradiction:
    reason: Reason
    # The words an older memory must all contain to be about the same thing.
    terms: tuple[str, ...]
    # For "moved": the new place, which older residence statements do not name.
    place: str = ""


def negated(text: str) -> bool:
    """Whether a statement says no: "I don't like coffee", "not any more", "never"."""
    return bool(_NEGATION.search(text))


def detect(text: str) -> Contradiction | None:
    """What this statement makes untrue, if anything."""
    text = text.replace("\u2019", "'").strip()
    if match := _MOVED.search(text):
        place = next(value for value in (match["place"], match["place2"], match["place3"]) if value)
        return Contradiction("moved", ("live",), place.strip())
    if match := _CLOSED.search(text):
        subject = next(value for value in (match["subject"], match["subject2"], match["subject3"]) if value)
        terms = tuple(word for word in query_terms(subject) if word not in _NOT_NAMES)
        if terms:
            return Contradiction("closed", terms)
    if match := _NO_LONGER.search(text):
        rest = next(v for v in (match["state"], match["state2"], match["habit"], match["habit2"]) if v)
        terms = tuple(query_terms(rest))
        if terms:
            return Contradiction("no_longer", terms)
    return None


def contradicts(contradiction: Contradiction, statement: Memory, older: Memory) -> bool:
    """Whether `older` is made untrue by `statement`, which carries `contradiction`."""
    if older.id == statement.id or older.created_at > statement.created_at or not older.recallable:
        return False
    text = older.text.replace("\u2019", "'")
    if detect(text) == contradiction:
        return False  # the same news said twice is not a contradiction of itself
    if contradiction.reason == "moved":
        match = _RESIDENCE.search(text)
        return (
            older.speaker == "user"
            and match is not None
            and not same_place(match["place"], contradiction.place)
        )
    words = set(query_terms(text))
    if not set(contradiction.terms) <= words:
        return False
    if contradiction.reason == "no_longer":
        # "I eat meat" is undone by "I don't eat meat any more"; "I never eat meat" already agrees,
        # and "my sister is vegetarian" is not about the person.
        return older.speaker == "user" and bool(_FIRST_PERSON.search(text)) and not negated(text)
    return True


def same_place(one: str, other: str) -> bool:
    """ "New York" and "new york city" name one place; "New York" and "New Delhi" do not."""
    a, b = one.lower().split(), other.lower().split()
    return a[: len(b)] == b[: len(a)]


def search_terms(contradiction: Contradiction) -> list[str]:
    """Words to find candidate older memories by lexical search."""
    if contradiction.reason == "moved":
        return ["live", "living", "lived", "moved", "based"]
    return list(contradiction.terms)
