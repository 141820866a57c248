"""What a mini-app's rules can use of a person's memories: their city, their pet, their birthday.

Only the person's own statements are read (the caller passes their recallable memories), and only
by narrow patterns: a rule that guesses wrong puts a stranger's name in someone's app.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

_NAME = r"([A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2})"
_CITY = (
    re.compile(r"\bI (?:live|am living|'m living) in " + _NAME),
    re.compile(r"\bI (?:moved|have moved|'ve moved|just moved) to " + _NAME),
    re.compile(r"\bI'?m (?:based|staying) in " + _NAME),
)
_PET = re.compile(
    r"\b(?i:my) (dog|cat|puppy|kitten|rabbit|hamster|parrot)(?:'s name)? "
    r"(?:is called|is named|named|called|is) " + _NAME
)
_MONTHS = ("january february march april may june july august september october november december").split()
_BIRTHDAY = re.compile(
    r"\bmy birthday is (?:on )?(?:the )?(?:(\d{1,2})(?:st|nd|rd|th)? (?:of )?([a-z]+)|([a-z]+) (\d{1,2}))",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Facts:
    city: str | None = None
    pet: tuple[str, str] | None = None  # (animal, name)
    birthday: tuple[int, int] | None = None  # (month, day)


def facts_from(memories: Iterable[str]) -> Facts:
    """The facts the newest memory states (pass memories newest first)."""
    city: str | None = None
    pet: tuple[str, str] | None = None
    birthday: tuple[int, int] | None = None
    for text in memories:
        city = city or _first(_CITY, text)
        if pet is None and (match := _PET.search(text)):
            pet = (match[1], match[2])
        birthday = birthday or _birthday(text)
    return Facts(city, pet, birthday)


def _first(patterns: Iterable[re.Pattern[str]], text: str) -> str | None:
    for pattern in patterns:
        if match := pattern.search(text):
            return match[1]
    return None


def _birthday(text: str) -> tuple[int, int] | None:
    match = _BIRTHDAY.search(text)
    if not match:
        return None
    day, month = (match[1], match[2]) if match[1] else (match[4], match[3])
    month = month.lower()
    if month not in _MONTHS:
        return None
    numbers = (_MONTHS.index(month) + 1, int(day))
    try:
        date(2000, *numbers)  # a leap year: 29 February is a birthday too
    except ValueError:
        return None
    return numbers
