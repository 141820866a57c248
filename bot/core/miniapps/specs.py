"""A kind's spec filled by rules and defaults from the request and the person's facts.

Rules always produce a spec that meets the kind's schema: they are what a build falls back to when
the model writes something unusable, so they never depend on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from bot.core.miniapps.facts import Facts
from bot.core.miniapps.kinds import DESCRIPTIONS, LINE_CHARS, TITLE_CHARS, AppKind

Spec = dict[str, Any]

_PACKING: dict[str, tuple[str, ...]] = {
    "beach": ("Swimsuit", "Sunscreen", "Towel", "Sunglasses", "Hat", "Flip-flops", "Water bottle", "Book"),
    "camping": ("Tent", "Sleeping bag", "Torch", "Matches", "Water", "First-aid kit", "Rain jacket"),
    "ski": ("Ski jacket", "Gloves", "Goggles", "Thermals", "Lip balm", "Ski pass"),
    "hiking": ("Boots", "Map", "Water", "Snacks", "Rain jacket", "First-aid kit", "Phone charger"),
    "grocer": ("Bread", "Milk", "Eggs", "Vegetables", "Fruit", "Rice"),
    "shopping": ("Bread", "Milk", "Eggs", "Vegetables", "Fruit", "Rice"),
    "moving": ("Boxes", "Tape", "Labels", "Change address", "Meter readings", "Cleaning"),
    "trip": ("Passport", "Tickets", "Phone charger", "Toothbrush", "Clothes", "Medication"),
}
_GENERIC_ITEMS = ("First thing", "Second thing", "Third thing")
_HOT_CITIES = ("Seville", "Athens", "Phoenix", "Dubai", "Bangkok", "Cairo")
_TRACKED: tuple[tuple[str, str, str, float, float], ...] = (
    # cue, habit, unit, goal, step
    ("water", "Water", "glasses", 8, 1),
    ("run", "Running", "km", 5, 0.5),
    ("step", "Steps", "steps", 10_000, 500),
    ("sleep", "Sleep", "hours", 8, 0.5),
    ("read", "Reading", "pages", 20, 5),
)
_DECKS: dict[str, tuple[tuple[str, str], ...]] = {
    "spanish": (("hello", "hola"), ("thank you", "gracias"), ("water", "agua"), ("friend", "amigo")),
    "french": (("hello", "bonjour"), ("thank you", "merci"), ("water", "eau"), ("friend", "ami")),
    "german": (("hello", "hallo"), ("thank you", "danke"), ("water", "Wasser"), ("friend", "Freund")),
    "capital": (("France", "Paris"), ("Japan", "Tokyo"), ("Kenya", "Nairobi"), ("Peru", "Lima")),
}
_CONVERSIONS: dict[str, tuple[str, list[dict[str, float | str]]]] = {
    "temperature": (
        "Temperature",
        [
            {"name": "°C", "factor": 1, "offset": 0},
            {"name": "°F", "factor": 5 / 9, "offset": -160 / 9},
            {"name": "K", "factor": 1, "offset": -273.15},
        ],
    ),
    "weight": ("Weight", [{"name": "kg", "factor": 1}, {"name": "lb", "factor": 0.45359237},
                          {"name": "g", "factor": 0.001}, {"name": "oz", "factor": 0.028349523125}]),
    "volume": ("Volume", [{"name": "litres", "factor": 1}, {"name": "cups", "factor": 0.2365882365},
                          {"name": "ml", "factor": 0.001}, {"name": "US gallons", "factor": 3.785411784}]),
    "distance": ("Distance", [{"name": "km", "factor": 1000}, {"name": "miles", "factor": 1609.344},
                              {"name": "m", "factor": 1}, {"name": "feet", "factor": 0.3048}]),
}  # fmt: skip
_CONVERSION_CUES = {
    "temperature": ("temperature", "celsius", "fahrenheit", "°"),
    "weight": ("weight", "kg", "pound", "lb", "gram", "ounce"),
    "volume": ("volume", "litre", "liter", "cup", "ml", "gallon", "recipe", "cooking"),
}
_HOLIDAYS = {"christmas": (12, 25), "new year": (1, 1), "halloween": (10, 31), "valentine": (2, 14)}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MINUTES = re.compile(r"\b(\d{1,3})[\s-]*(?:min|minute)")


def title_of(request: str, kind: AppKind) -> str:
    """The request, tidied into a title: "a packing list for my beach trip" → "Packing list for my
    beach trip". An empty request gets the kind's own name."""
    words = " ".join(request.split()).strip(" .!?")
    words = re.sub(r"^(?:please |can you |could you )?(?:make|build|create|give)?\s*(?:me )?", "", words,
                   flags=re.IGNORECASE)  # fmt: skip
    words = re.sub(r"^(?:an? |the )", "", words, flags=re.IGNORECASE)
    if not words:
        words = DESCRIPTIONS[kind].removeprefix("a ")
    title = words[0].upper() + words[1:]
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


def rule_spec(kind: AppKind, request: str, facts: Facts, today: date) -> Spec:
    """A spec for `kind` that meets its schema, from the request's words and the person's facts."""
    lowered = request.lower()
    spec: Spec = {"title": title_of(request, kind), "theme": "dark" if "dark" in lowered else "auto"}
    spec.update(_FILLERS[kind](lowered, facts, today))
    return spec


def _checklist(lowered: str, facts: Facts, today: date) -> Spec:
    preset = next((items for cue, items in _PACKING.items() if cue in lowered), _GENERIC_ITEMS)
    items = [{"text": text, "done": False} for text in preset]
    if facts.pet and any(cue in lowered for cue in ("trip", "pack", "beach", "camping", "travel")):
        animal, name = facts.pet
        items.append({"text": _line(f"Food and water bowl for {name} ({animal})"), "done": False})
    return {"items": items}


def _tracker(lowered: str, facts: Facts, today: date) -> Spec:
    for cue, habit, unit, goal, step in _TRACKED:
        if cue in lowered:
            return {"habit": habit, "unit": unit, "goal": goal, "step": step}
    return {"habit": "Habit", "unit": "times", "goal": 1, "step": 1}


def _ranking(lowered: str, facts: Facts, today: date) -> Spec:
    if any(cue in lowered for cue in ("hot", "warm", "weather", "temperature")) and "cit" in lowered:
        cities = [facts.city] if facts.city else []
        cities += [city for city in _HOT_CITIES if city != facts.city]
        return {"columns": ["City", "High (°C)"], "rows": [[city, ""] for city in cities[:6]]}
    return {"columns": ["Name", "Score"], "rows": [["First", "3"], ["Second", "2"], ["Third", "1"]]}


def _timer(lowered: str, facts: Facts, today: date) -> Spec:
    minutes = [int(found) for found in _MINUTES.findall(lowered)]
    work = min(max(minutes[0], 1), 180) if minutes else 25
    rest = min(minutes[1], 60) if len(minutes) > 1 else 5
    return {"work_minutes": work, "break_minutes": rest, "rounds": 4}


def _countdown(lowered: str, facts: Facts, today: date) -> Spec:
    if match := _ISO_DATE.search(lowered):
        try:
            found = date(int(match[1]), int(match[2]), int(match[3]))
            return {"label": f"Until {found.isoformat()}", "target": found.isoformat()}
        except ValueError:
            pass
    for name, (month, day) in _HOLIDAYS.items():
        if name in lowered:
            return {"label": f"Until {name.title()}", "target": _next(today, month, day).isoformat()}
    if "birthday" in lowered and facts.birthday:
        return {"label": "Until your birthday", "target": _next(today, *facts.birthday).isoformat()}
    return {"label": "Until the big day", "target": (today + timedelta(days=30)).isoformat()}


def _quiz(lowered: str, facts: Facts, today: date) -> Spec:
    deck = next((cards for cue, cards in _DECKS.items() if cue in lowered), None)
    if deck is None:
        deck = (("Tap to turn me over", "Add your own cards below"), ("2 + 2", "4"))
    return {"cards": [{"front": front, "back": back} for front, back in deck]}


def _converter(lowered: str, facts: Facts, today: date) -> Spec:
    words = set(re.findall(r"[a-z°]+", lowered))
    found = next(
        (name for name, cues in _CONVERSION_CUES.items() if any(c in words or c in lowered for c in cues)),
        "distance",
    )
    quantity, units = _CONVERSIONS[found]
    return {"quantity": quantity, "units": [dict(unit) for unit in units]}


def _notes(lowered: str, facts: Facts, today: date) -> Spec:
    if "gratitude" in lowered or "grateful" in lowered:
        return {"prompt": "Three things I'm grateful for today", "placeholder": "Today I'm grateful for…"}
    if "journal" in lowered or "diary" in lowered:
        return {"prompt": "How was today?", "placeholder": "Write a few lines…"}
    return {"prompt": "Notes", "placeholder": "Jot something down…"}


def _next(today: date, month: int, day: int) -> date:
    for year in (today.year, today.year + 1, today.year + 4):
        try:
            found = date(year, month, day)
        except ValueError:  # 29 February in a year that has none
            continue
        if found >= today:
            return found
    return today


def _line(text: str) -> str:
    return text[:LINE_CHARS]


_FILLERS: dict[AppKind, Callable[[str, Facts, date], Spec]] = {
    "checklist": _checklist,
    "tracker": _tracker,
    "ranking": _ranking,
    "timer": _timer,
    "countdown": _countdown,
    "quiz": _quiz,
    "converter": _converter,
    "notes": _notes,
}
