"""Who may talk to Kindred, and who administers it. Ids are platform-qualified: `telegram:42`."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.usage import Tier

NOT_ALLOWED = "Sorry, this Kindred is private. Ask its admin to add you."


@dataclass(frozen=True, slots=True)
class Access:
    # None: everyone may talk. Otherwise only these people, or anyone in these chats/servers.
    allowed: frozenset[str] | None = None
    admins: frozenset[str] = frozenset()
    # KINDRED_GUESTS=on: people the allowlist leaves out may talk too, on the guests' budget.
    guests: bool = False

    def may_talk(self, user_id: str, *places: str) -> bool:
        return self.guests or self.tier(user_id, *places) != "guest"

    def tier(self, user_id: str, *places: str) -> Tier:
        """Who the person is to their budget: an admin, someone the allowlist lets in (anyone,
        without one), or a guest."""
        if user_id in self.admins:
            return "admin"
        if self.allowed is None or user_id in self.allowed or any(place in self.allowed for place in places):
            return "member"
        return "guest"

    def is_admin(self, user_id: str) -> bool:
        return user_id in self.admins
