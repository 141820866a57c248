"""The period a question names ("in July 2023", "on October 13, 2023", "in June"), if any.

Only calendar names are read, never relative ones ("last week", "two years ago"): those need the
time the question was asked about, which a search does not know. A month without a year stands for
that month in any year. Used by recall to favour memories from that time (core/memory/recall.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = "(" + "|".join(MONTHS) + ")"
_YEAR = r"((?:19|20)\d\d)"
# Most specific first. A bare month needs a preposition before it, or "may" would be a verb.
_PATTERNS = (
    re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b"),  # October 13, 2023
    re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),  # 13 October 2023
    re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b"),  # July 2023
    re.compile(rf"\b(?:in|during|of|since|around)\s+{_MONTH}\b"),  # in June
    re.compile(rf"\b(?:in|during|of|since|around)\s+{_YEAR}\b"),  # in 2023
)


@dataclass(frozen=True, slots=True)
class Period:
    year: int | None = None
    month: int | None = None
    day: int | None = None

    def covers(self, at: datetime) -> bool:
        return (
            (self.year is None or at.year == self.year)
            and (self.month is None or at.month == self.month)
            and (self.day is None or at.day == self.day)
        )


def named_period(text: str) -> Period | None:
    """The most specific calendar period `text` names, or None."""
    lowered = text.lower()
    for number, pattern in enumerate(_PATTERNS):
        found = pattern.search(lowered)
        if found is None:
            continue
        parts = found.groups()
        if number == 0:
            return Period(int(parts[2]), _month(parts[0]), int(parts[1]))
        if number == 1:
            return Period(int(parts[2]), _month(parts[1]), int(parts[0]))
        if number == 2:
            return Period(int(parts[1]), _month(parts[0]))
        if number == 3:
            return Period(month=_month(parts[0]))
        return Period(year=int(parts[0]))
    return None


def _month(name: str) -> int:
    return MONTHS.index(name) + 1
