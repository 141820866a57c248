"""The admin's personas, read from TOML text (`personas.toml`): a name, a system prompt, a
greeting, and optionally the voice spoken replies use and a default model.

The model is kept as the admin wrote it, an opaque name: which models exist, and who may use
them, is the models list's business ([personal] 3), not this file's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.core.errors import ConfigError
from bot.core.toml_tables import named_default, read_tables, text_field

# What `KINDRED_PERSONA` is called when no personas file exists.
DEFAULT_NAME = "kindred"
# A name is typed after /persona and shown as a Discord choice (at most 25 of them, 100 characters
# each) and in a Telegram button's data (64 bytes): one short word keeps it usable on all three.
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
MAX_PERSONAS = 25
MAX_PROMPT_CHARS = 8000
MAX_GREETING_CHARS = 1000
_FIELDS = {"name", "prompt", "greeting", "voice", "model"}


@dataclass(frozen=True, slots=True)
class Persona:
    name: str
    prompt: str
    greeting: str = ""
    # The speech voice of spoken replies in this persona (KINDRED_TTS_VOICE's kind); None: that one.
    voice: str | None = None
    # The model this persona prefers, as the admin named it; None: the configured model.
    model: str | None = None


@dataclass(frozen=True, slots=True)
class PersonaBook:
    """Every persona, in the file's order, and the one a chat has until someone picks."""

    personas: tuple[Persona, ...]
    default: str

    def find(self, name: str) -> Persona | None:
        wanted = name.strip().lower()
        return next((p for p in self.personas if p.name == wanted), None)

    def current(self, chosen: str | None) -> Persona:
        """The chosen persona, or the default when none was chosen or the admin removed it."""
        found = self.find(chosen) if chosen else None
        return found or self.find(self.default) or self.personas[0]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.personas)

    @classmethod
    def single(cls, prompt: str) -> PersonaBook:
        """`KINDRED_PERSONA` alone, as when no personas file exists."""
        return cls((Persona(DEFAULT_NAME, prompt),), DEFAULT_NAME)


def parse_personas(text: str, where: str = "personas.toml") -> PersonaBook:
    """The personas in `text`. Raises ConfigError with one line that names `where` and what is
    wrong: tomllib's message (with its line and column) for a syntax error, else the persona."""
    data, entries = read_tables(text, where, "persona", most=MAX_PERSONAS, needs="a name and a prompt")
    personas = tuple(_persona(entry, number, where) for number, entry in enumerate(entries, 1))
    return PersonaBook(personas, named_default(data, [p.name for p in personas], where, "persona"))


def _persona(entry: Any, number: int, where: str) -> Persona:
    place = f"{where}: persona {number}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{place} is not a table")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise ConfigError(f"{place} has an unknown key {unknown[0]!r} (known: {', '.join(sorted(_FIELDS))})")
    name = text_field(entry, "name", place, 32)
    if name is None or not NAME.fullmatch(name):
        raise ConfigError(
            f"{place}: name must be one lower-case word (a-z, 0-9, - and _), up to 32 characters"
        )
    place = f"{where}: persona {name!r}"
    prompt = text_field(entry, "prompt", place, MAX_PROMPT_CHARS)
    if not prompt:
        raise ConfigError(f"{place} has no prompt")
    return Persona(
        name,
        prompt,
        text_field(entry, "greeting", place, MAX_GREETING_CHARS) or "",
        text_field(entry, "voice", place, 200),
        text_field(entry, "model", place, 200),
    )
