"""The settings screen's value types: who it is for, and each row as a platform renders it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Who:
    """The person a settings screen is for, and where it shows."""

    person: str
    # Where group-wide settings (the persona) apply: the chat the screen was asked for in.
    chat: str
    # The chat is the person's own private chat (their choice there is theirs: exported, forgotten).
    private_chat: bool
    # Only the person reads the screen (a private chat, Discord's ephemeral answer, the web page):
    # only then are their own settings shown, since a group should not read them.
    only_they_see: bool
    # Group-wide settings change only for those the platform names the group's admins; always
    # true in a private chat.
    may_change_chat: bool = True


@dataclass(frozen=True, slots=True)
class Choice:
    """One value a row can take: `value` as a command types it (and a button carries it, so it
    stays short), `label` as a button shows it."""

    value: str
    label: str


@dataclass(frozen=True, slots=True)
class RowView:
    """One setting as it is now for a person. No `choices`: it is shown, not set, here."""

    key: str
    name: str
    # The current value, in words.
    value: str
    choices: tuple[Choice, ...] = ()
    # The choice that is current (marked on a button, preselected in a menu); None: none of them.
    current: str | None = None
    # How to change it by typing, for the terminal and for values no button offers.
    command: str = ""
    group_wide: bool = False

    def choice(self, value: str) -> Choice | None:
        wanted = value.strip().lower()
        return next((c for c in self.choices if c.value == wanted), None)
