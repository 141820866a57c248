"""/persona: each chat's persona shown, listed and picked, and the one a reply is written in.

In a group only its admins pick (the platform says who they are: the adapter passes
`may_change`). The choice is the chat's; what Kindred knows stays the person's, so a switch
forgets nothing (memories are recalled by person, never by persona).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.core.errors import StoreUnavailable
from bot.core.personas.book import Persona
from bot.core.personas.ports import PersonaChoices, PersonaSource

log = logging.getLogger(__name__)

GROUP_ADMINS_ONLY = "Only this group's admins can change my persona here."
STORE_DOWN = "I can't change my persona right now (my store is unavailable); try again soon."


@dataclass(frozen=True, slots=True)
class PersonaMenu:
    """What a picker shows: every name, the chat's current one, and the same in words."""

    names: tuple[str, ...]
    current: str
    text: str


def listing(names: tuple[str, ...], current: str) -> str:
    shown = ", ".join(f"{name} (now)" if name == current else name for name in names)
    return f"Personas: {shown}. /persona NAME picks one."


class PersonaPicker:
    def __init__(self, source: PersonaSource, choices: PersonaChoices) -> None:
        self.source = source
        self.choices = choices

    async def persona(self, chat_id: str) -> Persona:
        """The persona a reply in this chat is written in. A store that cannot say gives the
        default: the reply matters more than who writes it."""
        try:
            chosen = await self.choices.chosen(chat_id)
        except StoreUnavailable as exc:
            log.warning("personas: cannot read %s's choice (%s); the default answers", chat_id, exc)
            chosen = None
        return self.source.book().current(chosen)

    async def menu(self, chat_id: str) -> PersonaMenu:
        """/persona alone: the current persona and the others."""
        book = self.source.book()
        current = await self.persona(chat_id)
        text = f"I'm {current.name} in this chat.\n\n{current.prompt}\n\n{listing(book.names, current.name)}"
        return PersonaMenu(book.names, current.name, text)

    async def pick(self, chat_id: str, name: str, *, owner: str | None, may_change: bool = True) -> str:
        """/persona NAME: the answer in plain words. `owner`: the person, in a private chat;
        None in a group. Nothing is kept for an unknown name or a person who may not change it."""
        book = self.source.book()
        persona = book.find(name)
        if persona is None:
            shown = " ".join(name.split())[:40]
            current = (await self.persona(chat_id)).name
            return f"I have no persona called {shown!r}. {listing(book.names, current)}"
        if not may_change:
            return GROUP_ADMINS_ONLY
        try:
            await self.choices.choose(chat_id, persona.name, owner)
        except StoreUnavailable:
            return STORE_DOWN
        greeting = f"\n\n{persona.greeting}" if persona.greeting else ""
        return f"Done: I'm {persona.name} in this chat now. What I know about you stays the same.{greeting}"
