"""Personas ([personal] 2): who Kindred is in a chat. The admin's list (book.py), each chat's
choice (ports.py, picker.py). Memory stays the person's whichever persona speaks."""

from bot.core.personas.book import DEFAULT_NAME, Persona, PersonaBook, parse_personas
from bot.core.personas.picker import PersonaMenu, PersonaPicker
from bot.core.personas.ports import PersonaChoices, PersonaSource

__all__ = [
    "DEFAULT_NAME",
    "Persona",
    "PersonaBook",
    "PersonaChoices",
    "PersonaMenu",
    "PersonaPicker",
    "PersonaSource",
    "parse_personas",
]
