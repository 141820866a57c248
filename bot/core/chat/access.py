"""Who may talk to Kindred, and who administers it. Ids are platform-qualified: `telegram:42`."""

from __future__ import annotations

from dataclasses import dataclass

NOT_ALLOWED = "Sorry, this Kindred is private. Ask its admin to add you."


@dataclass(frozen=True, slots=True)
class Access:
    # None: everyone may talk. Otherwise only these people, or anyone in these chats/servers.
    allowed: frozenset[str] | None = None
    admins: frozenset[str] = frozenset()

    def may_talk(self, user_id: str, *places: str) -> bool:
        if self.allowed is None or user_id in self.admins:
            return True
        return user_id in self.allowed or any(place in self.allowed for place in places)

    def is_admin(self, user_id: str) -> bool:
        return user_id in self.admins
