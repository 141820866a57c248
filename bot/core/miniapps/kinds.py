"""The kinds of mini-app Kindred builds, each with the JSON schema its spec must meet, and the rule
that picks a kind from what the person asked for.

A spec is plain JSON: what the kind's template shows and starts with. Every string in it is the
person's (or the model's) text and is treated as such by the renderer: shown, never run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

AppKind = Literal["checklist", "tracker", "ranking", "timer", "countdown", "quiz", "converter", "notes"]
KINDS: tuple[AppKind, ...] = get_args(AppKind)
THEMES = ("auto", "light", "dark")
TITLE_CHARS = 60
LINE_CHARS = 120


def _text(max_length: int = LINE_CHARS, min_length: int = 1) -> dict[str, Any]:
    return {"type": "string", "minLength": min_length, "maxLength": max_length}


def _number(minimum: float, maximum: float, kind: str = "number") -> dict[str, Any]:
    return {"type": kind, "minimum": minimum, "maximum": maximum}


def _list(items: Mapping[str, Any], max_items: int, min_items: int = 1) -> dict[str, Any]:
    return {"type": "array", "items": dict(items), "minItems": min_items, "maxItems": max_items}


def _record(required: Mapping[str, Any], optional: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
    }


def _spec(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A kind's schema: its own fields plus the title and theme every app has."""
    common = {"title": _text(TITLE_CHARS), "theme": {"type": "string", "enum": list(THEMES)}}
    return _record({**common, **fields})


SCHEMAS: dict[AppKind, dict[str, Any]] = {
    "checklist": _spec({"items": _list(_record({"text": _text()}, {"done": {"type": "boolean"}}), 100)}),
    "tracker": _spec(
        {"habit": _text(40), "unit": _text(20), "goal": _number(1, 10_000), "step": _number(0.1, 1_000)}
    ),
    "ranking": _spec(
        {"columns": _list(_text(40), 6), "rows": _list(_list(_text(80, 0), 6), 50, min_items=0)}
    ),
    "timer": _spec(
        {
            "work_minutes": _number(1, 180, "integer"),
            "break_minutes": _number(0, 60, "integer"),
            "rounds": _number(1, 12, "integer"),
        }
    ),
    "countdown": _spec(
        {"label": _text(80), "target": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2})?$"}}
    ),
    "quiz": _spec({"cards": _list(_record({"front": _text(), "back": _text()}), 100)}),
    "converter": _spec(
        {
            "quantity": _text(40),
            # A value in the base unit = value × factor + offset: °F needs the offset.
            "units": _list(
                _record({"name": _text(30), "factor": _number(1e-12, 1e12)}, {"offset": _number(-1e6, 1e6)}),
                12,
                min_items=2,
            ),
        }
    ),
    "notes": _spec({"prompt": _text(120), "placeholder": _text(80)}),
}

DESCRIPTIONS: dict[AppKind, str] = {
    "checklist": "a checklist",
    "tracker": "a tracker",
    "ranking": "a ranking table",
    "timer": "a focus timer",
    "countdown": "a countdown",
    "quiz": "flashcards",
    "converter": "a converter",
    "notes": "a journal",
}

# Words that point at a kind, each worth one vote (a phrase two). Ties go to the earlier kind.
_CUES: dict[AppKind, tuple[str, ...]] = {
    "checklist": ("checklist", "check list", "list", "packing", "pack", "todo", "to-do", "to do",
                  "groceries", "grocery", "shopping", "tasks", "chores"),
    "tracker": ("track", "tracker", "tracking", "habit", "habits", "water", "runs", "running", "log",
                "streak", "steps", "glasses", "workouts", "sleep"),
    "ranking": ("rank", "ranking", "table", "compare", "comparison", "top", "leaderboard", "best",
                "hottest", "score", "scores", "columns", "spreadsheet"),
    "timer": ("timer", "pomodoro", "focus", "stopwatch", "interval", "minutes", "break"),
    "countdown": ("countdown", "count down", "days until", "until", "birthday", "deadline", "days left",
                  "wedding", "christmas", "vacation starts"),
    "quiz": ("quiz", "flashcards", "flashcard", "flash cards", "vocabulary", "vocab", "study", "learn",
             "test me", "capitals", "words"),
    "converter": ("convert", "converter", "conversion", "calculator", "calculate", "units", "celsius",
                  "fahrenheit", "km", "miles", "kg", "pounds", "litres", "liters", "cups"),
    "notes": ("notes", "note", "journal", "diary", "notebook", "gratitude", "jot", "ideas", "reflect"),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Classified:
    kind: AppKind
    # The votes each kind got: 0 everywhere means the default, a checklist.
    votes: Mapping[str, int]


def classify(request: str) -> Classified:
    """The kind the request asks for, by the cue words it uses."""
    text = " " + re.sub(r"[^\w\s-]", " ", request.lower()) + " "
    votes: dict[str, int] = {}
    for kind, cues in _CUES.items():
        votes[kind] = sum((2 if " " in cue else 1) for cue in cues if f" {cue} " in text)
    best = max(KINDS, key=lambda kind: (votes[kind], -KINDS.index(kind)))
    return Classified(best if votes[best] > 0 else "checklist", votes)
