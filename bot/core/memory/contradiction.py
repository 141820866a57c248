"""Statements that make older memories untrue: "Luigi's closed down", "we moved to Porto", "I left
Acme", "I quit smoking".

Two readings, both by rules: a 135M model cannot be trusted to judge this, and a wrong supersession
hides a true memory.
- A closure names a place; every older memory that names it is no longer true.
- Slots (`slots.py`): the new statement says something about the person's residence, employer,
  favourite or a habit; an older statement of theirs about the same attribute says otherwise
  (another city, an employer they left, a habit they quit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.memory import slots
from bot.core.memory.regions import is_region
from bot.core.memory.slots import Slot
from bot.core.models import Memory
from bot.core.text import query_terms

_NAME = r"[A-Z][\w'’&-]*(?:\s+(?:[A-Z][\w'’&-]*|de|di|la|le|of|the|and|&))*"
_CLOSED = re.compile(
    rf"(?P<subject>{_NAME})\s+(?:has\s+|have\s+|is\s+|was\s+|got\s+|just\s+|finally\s+)*"
    # Closed for good, not for the day ("closed early today") nor closing a thing ("closed the door").
    r"(?:(?:closed|shut)\s+(?:down|for\s+good|permanently|its\s+doors)\b(?!\s+(?:the|an?|my|his|her|"
    r"their|our|your|it|this|that)\b)|closed\s*[.!]*$)"
    rf"|(?P<subject2>{_NAME})\s+(?:went|has\s+gone|is\s+going)\s+out\s+of\s+business"
    rf"|(?P<subject3>{_NAME})\s+(?:doesn'?t|does\s+not|no\s+longer)\s+exists?\b"
)
_NEGATION = re.compile(r"\b(?:not|no|never|no\s+longer|any\s?more|\w+n't|don'?t|doesn'?t)\b", re.I)
# The closing of a generic word is not a name ("The door closed", "It shut down"), and the word
# that opens a sentence is not part of one ("Sadly Luigi's went out of business").
_NOT_NAMES = frozenset(
    "it the that this he she they we i door window sadly unfortunately apparently so well oh also btw "
    "guess update news bad good and but yes".split()
)
# Attributes with one value at a time: a new value replaces the old one.
_SINGLE = frozenset({"residence", "employer", "favourite"})
_SEARCH_WORDS = {
    "residence": ["live", "living", "lived", "moved", "based", "relocated"],
    "employer": ["work", "working", "job", "joined"],
    "left": ["work", "working", "live", "living", "lived", "based"],
    "favourite": ["favourite", "favorite"],
    "habit": [],
}


@dataclass(frozen=True, slots=True)
class Contradiction:
    """What a statement can make untrue: slots about the person, and a place that closed."""

    slots: tuple[Slot, ...] = ()
    closed: tuple[str, ...] = ()  # the words naming the place, all of which an older memory names


def negated(text: str) -> bool:
    """Whether a statement says no: "I don't like coffee", "not any more", "never"."""
    return bool(_NEGATION.search(text))


def detect(text: str) -> Contradiction | None:
    """What this statement can make untrue, if anything."""
    text = text.replace("\u2019", "'").strip()
    undoing = tuple(slot for slot in slots.read(text) if _can_undo(slot))
    closed: tuple[str, ...] = ()
    if match := _CLOSED.search(text):
        subject = next(value for value in (match["subject"], match["subject2"], match["subject3"]) if value)
        closed = tuple(word for word in query_terms(subject) if word not in _NOT_NAMES)
    return Contradiction(undoing, closed) if undoing or closed else None


def _can_undo(slot: Slot) -> bool:
    # A plain state ("I'm not vegetarian", "I eat fish") undoes nothing; news of a change does, and
    # so does any present value of a one-value attribute ("I live in Porto").
    return slot.change or (slot.attribute in _SINGLE and slot.holds)


def contradicts(found: Contradiction, statement: Memory, older: Memory) -> bool:
    """Whether `older` is made untrue by `statement`, which carries `found`."""
    if older.id == statement.id or older.created_at > statement.created_at or not older.recallable:
        return False
    if older.kind == "summary":
        return False  # a summary is revised sentence by sentence (`untrue_sentences`), not replaced
    text = older.text.replace("\u2019", "'")
    if found.closed and _names_closed(found, text):
        return True
    # The bot's words never stand for the person's, so only the person's own statements are read.
    return older.speaker == "user" and _any_undone(found, text)


def untrue_sentences(found: Contradiction, sentences: list[str]) -> list[int]:
    """Which of a summary's sentences (the person's own words) `found` makes untrue."""
    return [
        index
        for index, sentence in enumerate(sentences)
        if (found.closed and _names_closed(found, sentence)) or _any_undone(found, sentence)
    ]


def _any_undone(found: Contradiction, text: str) -> bool:
    return any(undoes(new, old) for new in found.slots for old in slots.read(text))


def _names_closed(found: Contradiction, text: str) -> bool:
    again = detect(text)
    if again is not None and again.closed == found.closed:
        return False  # the same news said twice is not a contradiction of itself
    return set(found.closed) <= set(query_terms(text))


def undoes(new: Slot, old: Slot) -> bool:
    """Whether what `new` says about the person makes `old` untrue."""
    if new.attribute == "habit" or old.attribute == "habit":
        return (
            new.attribute == old.attribute == "habit"
            and new.change
            and new.holds != old.holds
            and slots.same_habit(new.value, old.value)
        )
    if new.attribute == "left":  # "I left Acme" / "I left Glasgow": whichever it was
        place_or_work = old.attribute in ("residence", "employer")
        return place_or_work and old.holds and slots.same_value(new.value, old.value)
    if new.attribute != old.attribute or new.what != old.what:
        return False
    if new.holds and old.holds:
        if new.attribute == "residence" and not new.change and is_region(new.value) != is_region(old.value):
            return False  # "I live in Scotland" after "I live in Glasgow": both can be true
        return not slots.same_value(new.value, old.value)  # another city, another employer
    return new.holds != old.holds and slots.same_value(new.value, old.value)


def search_terms(found: Contradiction) -> list[str]:
    """Words to find candidate older memories by lexical search."""
    words: list[str] = list(found.closed)
    for slot in found.slots:
        words += _SEARCH_WORDS[slot.attribute]
        if slot.attribute != "habit" and slot.value != slots.ANY:
            words += query_terms(slot.value)
    return list(dict.fromkeys(words))
