"""Follow-ups to an app ("make it dark", "add a column for price"): rules that turn the last
version's spec into the next one. Each result is a whole spec, checked against the schema like a
new one, so a version never depends on the one before it to work."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.core.miniapps.kinds import LINE_CHARS, TITLE_CHARS, AppKind

Spec = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Edit:
    # The next spec, or None when this edit does not fit the app's kind.
    apply: Callable[[AppKind, Spec], Spec | None]
    # True when the words can only mean the last app ("add a column"): then not fitting is an
    # answer to give; a bare "add …" that fits nothing is a request for a new app instead.
    explicit: bool = True


_THEME = re.compile(r"^(?:make it |use |switch to |go )?(dark|light)(?: mode| theme)?$")
_COLUMN = re.compile(r"^add (?:a |another )?column(?: for| called| named)? (.+)$")
_ITEM = re.compile(r"^add (?:an item |an entry |a card )?(.+)$")
_RENAME = re.compile(r"^(?:rename it|call it|retitle it|change the title)(?: to)? (.+)$")
_CARD = re.compile(r"^(.+?)\s*(?:=|->|:)\s*(.+)$")


def edit_for(request: str) -> Edit | None:
    """The edit a follow-up asks for, or None when it reads as a request for a new app."""
    text = " ".join(request.split()).strip(" .!")
    lowered = text.lower()
    if match := _THEME.match(lowered):
        return Edit(_set_theme(match[1]))
    if match := _RENAME.match(lowered):
        return Edit(_rename(text[match.start(1) :]))
    if match := _COLUMN.match(lowered):
        return Edit(_add_column(text[match.start(1) :]))
    if match := _ITEM.match(lowered):
        return Edit(_add_item(text[match.start(1) :]), explicit=False)
    return None


def _set_theme(theme: str) -> Callable[[AppKind, Spec], Spec | None]:
    def edit(kind: AppKind, spec: Spec) -> Spec:
        return {**copy.deepcopy(spec), "theme": theme}

    return edit


def _rename(title: str) -> Callable[[AppKind, Spec], Spec | None]:
    def edit(kind: AppKind, spec: Spec) -> Spec:
        return {**copy.deepcopy(spec), "title": title[:TITLE_CHARS]}

    return edit


def _add_column(name: str) -> Callable[[AppKind, Spec], Spec | None]:
    def edit(kind: AppKind, spec: Spec) -> Spec | None:
        if kind != "ranking":
            return None
        new = copy.deepcopy(spec)
        new["columns"].append(name[:40].strip().capitalize())
        for row in new["rows"]:
            row.append("")
        return new

    return edit


def _add_item(text: str) -> Callable[[AppKind, Spec], Spec | None]:
    def edit(kind: AppKind, spec: Spec) -> Spec | None:
        new = copy.deepcopy(spec)
        if kind == "checklist":
            new["items"].append({"text": text[:LINE_CHARS], "done": False})
        elif kind == "ranking":
            new["rows"].append([text[:80], *([""] * (len(new["columns"]) - 1))])
        elif kind == "quiz" and (match := _CARD.match(text)):
            new["cards"].append({"front": match[1][:LINE_CHARS], "back": match[2][:LINE_CHARS]})
        else:
            return None
        return new

    return edit
