"""The personas room's boundaries: where each chat's choice is kept, and where the admin's list
comes from (a file that may change while Kindred runs)."""

from __future__ import annotations

from typing import Protocol

from bot.core.personas.book import PersonaBook


class PersonaChoices(Protocol):
    """Each chat's persona, as someone picked it (none picked: the default)."""

    async def choose(self, chat_id: str, persona: str, owner: str | None) -> None:
        """Keep `persona` for the chat, replacing an earlier choice. `owner`: the person whose
        private chat it is (exported and forgotten with them); None in a group."""
        ...

    async def chosen(self, chat_id: str) -> str | None:
        """The name picked for the chat, or None."""
        ...

    async def chosen_by(self, owner: str) -> list[tuple[str, str]]:
        """(chat, persona) of each private chat of `owner` that has a choice: what /export shows."""
        ...


class PersonaSource(Protocol):
    """The admin's personas as they are now. Never raises: a list that cannot be read now leaves
    the last good one in place."""

    def book(self) -> PersonaBook: ...
