"""The words of a reminder request, read by rules: repeats, spans, days and clock times.

Each finder reads the request with what earlier finders took masked out, records the span it took
(so that what is left is the task), and raises `Refused` for a reading that names no real value
(25:00, "in -3 days"). Used by reminder_text.py.
"""

from __future__ import annotations

import re
from datetime import date, time, timedelta

Found = tuple[int, int]  # a span of the request, taken by a finder
Day = tuple[str, int, int, int | None]  # ("relative", days ahead, tonight?, None) | ("weekday", n, 0, None)
# | ("date", month, day, year or None)

MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SHORT_MONTHS = {name[:3]: number for number, name in enumerate(MONTHS, start=1)}
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "other": 2,
}  # fmt: skip
_NUMBER = r"(\d[\d,]*|" + "|".join(_NUMBER_WORDS) + ")"
_UNIT = r"(second|sec|minute|min|hour|hr|day|week|month|year)s?"
_UNIT_NAMES = {"sec": "second", "min": "minute", "hr": "hour"}
# Whole names or the usual short forms only: a prefix would read "decide" as December.
_SHORT = ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sept", "sep", "oct", "nov", "dec")
_MONTH = "(" + "|".join([*MONTHS, *_SHORT]) + r")\b\.?"
_WEEKDAY = "(" + "|".join(WEEKDAYS) + ")"
_EVERY = re.compile(rf"\bevery\s+(?:{_NUMBER}\s+)?{_UNIT}\b", re.IGNORECASE)
_EVERY_WEEKDAY = re.compile(rf"\bevery\b(?=\s+{_WEEKDAY}\b)", re.IGNORECASE)
_IN = re.compile(rf"\bin\s+(?:{_NUMBER}\s+|(half an)\s+)?{_UNIT}\b", re.IGNORECASE)
_RELATIVE = re.compile(r"\b(the day after tomorrow|tomorrow|today|tonight|yesterday)\b", re.IGNORECASE)
_ON_WEEKDAY = re.compile(rf"\b(?:on\s+)?(?:(?:next|this|coming)\s+)?{_WEEKDAY}\b", re.IGNORECASE)
_DAY_MONTH = re.compile(
    rf"\b(?:on\s+)?(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTH}(?:,?\s+(\d{{4}}))?(?!\w)",
    re.IGNORECASE,
)
_MONTH_DAY = re.compile(
    rf"\b(?:on\s+)?{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE
)
_AT = re.compile(r"\b(?:at\s+)?(noon|midnight|midday)\b", re.IGNORECASE)
# "at 9" alone is a time only where a time ends ("at 9 to …", "at 9 tomorrow"): "look at 3 houses" is a task.
_CLOCK = re.compile(
    r"\bat\s+(\d{1,2})(?:(?:[:.h](\d{2}))(?:\s*([ap])\.?m\.?)?|\s*([ap])\.?m\.?"
    r"|(?=\s*(?:$|[,.;:!?]|(?:to|on|tomorrow|today|tonight|every|next|this|and|o'clock)\b)))(?!\w)",
    re.IGNORECASE,
)
_BARE_CLOCK = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\.?(?!\w)", re.IGNORECASE)
_PART_OF_DAY = {"morning": time(9, 0), "afternoon": time(15, 0), "evening": time(19, 0)}
_PART = re.compile(r"\b(?:in the|this)\s+(morning|afternoon|evening)\b", re.IGNORECASE)


class Refused(Exception):
    """A request that names no schedulable time; `reason` can be shown as it is."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _masked(text: str, spans: list[Found]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _count(word: str | None) -> int:
    if word is None:
        return 1
    lowered = word.lower()
    return _NUMBER_WORDS[lowered] if lowered in _NUMBER_WORDS else int(lowered.replace(",", ""))


def _unit(word: str) -> str:
    lowered = word.lower()
    return _UNIT_NAMES.get(lowered, lowered)


def find_every(text: str, spans: list[Found]) -> timedelta | None:
    """The repeat ("every day", "every 2 hours", "every Monday"), or None."""
    found = _EVERY.search(_masked(text, spans))
    if found is not None:
        spans.append(found.span())
        count, unit = _count(found.group(1)), _unit(found.group(2))
        if unit in ("month", "year"):
            raise Refused("I can repeat a reminder every so many hours, days or weeks, not months or years.")
        if count > 10_000:
            raise Refused("That repeat is too far apart to be useful; ask for a single reminder instead.")
        seconds = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}[unit]
        if count < 1:
            raise Refused("A reminder cannot repeat every zero units of time.")
        return timedelta(seconds=seconds * count)
    weekly = _EVERY_WEEKDAY.search(_masked(text, spans))
    if weekly is not None:  # the weekday itself is left for find_day
        spans.append(weekly.span())
        return timedelta(days=7)
    return None


def find_in(text: str, spans: list[Found]) -> tuple[int, str] | None:
    """A span from now ("in 20 minutes", "in half an hour", "in 3 days"), as (count, unit)."""
    found = _IN.search(_masked(text, spans))
    if found is None:
        return None
    spans.append(found.span())
    if found.group(2):
        return (30, "minute")
    return (_count(found.group(1)), _unit(found.group(3)))


def find_day(text: str, spans: list[Found]) -> Day | None:
    """The day named ("tomorrow", "on Thursday", "on 12 March 2027", "on March 12"), or None."""
    masked = _masked(text, spans)
    if (found := _RELATIVE.search(masked)) is not None:
        spans.append(found.span())
        word = found.group(1).lower()
        if word == "yesterday":
            raise Refused("Yesterday has already passed; give me a time that is still to come.")
        ahead = {"today": 0, "tonight": 0, "tomorrow": 1, "the day after tomorrow": 2}[word]
        return ("relative", ahead, int(word == "tonight"), None)
    for pattern, day_group, month_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        if (found := pattern.search(masked)) is not None:
            spans.append(found.span())
            year = int(found.group(3)) if found.group(3) else None
            month = _SHORT_MONTHS[found.group(month_group).lower()[:3]]
            return ("date", month, int(found.group(day_group)), year)
    if (found := _ON_WEEKDAY.search(masked)) is not None:
        spans.append(found.span())
        weekday = [name[:3] for name in WEEKDAYS].index(found.group(1).lower()[:3])
        return ("weekday", weekday, 0, None)
    return None


def find_time(text: str, spans: list[Found]) -> time | None:
    """The clock time named ("at 3pm", "at 15:30", "at 9", "at noon", "in the evening"), or None."""
    masked = _masked(text, spans)
    if (found := _AT.search(masked)) is not None:
        spans.append(found.span())
        return time(0, 0) if found.group(1).lower() == "midnight" else time(12, 0)
    found = _CLOCK.search(masked) or _BARE_CLOCK.search(masked)
    if found is not None:
        spans.append(found.span())
        half = found.group(3) or (found.group(4) if found.re is _CLOCK else None)
        return _clock(found.group(0), int(found.group(1)), int(found.group(2) or 0), half)
    if (found := _PART.search(masked)) is not None:
        spans.append(found.span())
        return _PART_OF_DAY[found.group(1).lower()]
    return None


def _clock(said: str, hour: int, minute: int, half: str | None) -> time:
    if minute > 59 or hour > 23 or (half and not 1 <= hour <= 12):
        raise Refused(f"{said.strip()!r} is not a time of day.")
    if half:
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    return time(hour, minute)


def add_months(day: date, months: int) -> date:
    """`day` so many calendar months later, on the month's last day where it is shorter (31 Jan → 28 Feb)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    for last in (day.day, 30, 29, 28):
        try:
            return date(year, month, min(day.day, last))
        except ValueError:
            continue
    raise AssertionError("every month has a 28th")
