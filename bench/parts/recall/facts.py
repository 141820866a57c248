"""What a fact family is, and the slot values every family may use.

A `Family` is one kind of fact a person tells a companion once (a new pet, a prescription, a flight
that got cancelled), with the questions they might ask about it much later. Slots in braces are
filled per fact from the family's own lists or from `SHARED`, so a few dozen families give
thousands of distinct facts. The other lines are the distractors real chats are full of:

- `near`: the same topic without the fact ("the pharmacy line was ridiculous today");
- `others`: the same kind of thing about someone or something else ("my mom just started
  metformin"), filled with other values than the fact's: dense embeddings tend to confuse these;
- `mentions`: the fact's rare key again, later, without the answer ("Biscuit chewed my slippers"):
  a keyword match alone is not enough either;
- `replies`: what the companion says right after hearing the fact, without repeating the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    statements: Sequence[str]
    # Questions that name the fact's rare word, name or number: where lexical search helps.
    keyed: Sequence[str] = ()
    # Questions in other words than the statement: where dense search helps.
    paraphrases: Sequence[str] = ()
    slots: Mapping[str, Sequence[str]] = field(default_factory=dict)
    near: Sequence[str] = ()
    others: Sequence[str] = ()
    mentions: Sequence[str] = ()
    replies: Sequence[str] = ()
    # A person can have several at once (two pets, two prescriptions); only keyed questions tell
    # them apart, so a person with two gets no paraphrase question about either.
    repeatable: bool = False


MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

SHARED: Mapping[str, Sequence[str]] = {
    "month": MONTHS,
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "first": (
        "Maya",
        "Tomas",
        "Priya",
        "Jonah",
        "Aisha",
        "Lukas",
        "Rosa",
        "Kenji",
        "Ingrid",
        "Mateo",
        "Nadia",
        "Felix",
        "Zara",
        "Omar",
        "Hana",
        "Declan",
        "Soren",
        "Imogen",
        "Thiago",
        "Wren",
    ),
    "city": (
        "Lisbon",
        "Denver",
        "Glasgow",
        "Osaka",
        "Montreal",
        "Austin",
        "Krakow",
        "Melbourne",
        "Tucson",
        "Bergen",
        "Valencia",
        "Halifax",
    ),
    "day": tuple(str(d) for d in range(1, 29)),
    "num3": tuple(str(n) for n in range(112, 989, 7)),
    "num4": tuple(str(n) for n in range(1031, 9973, 137)),
    "small": ("two", "three", "four", "five", "six", "seven"),
    "amount": ("180", "240", "350", "600", "1,200", "2,500", "4,000", "9,000"),
    "year": ("2015", "2016", "2017", "2018", "2019", "2020", "2021"),
}
