"""The settings screen's value types: who it is for, and each row as a platform renders it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.core.chat_models import ModelPicker
    from bot.core.personas import PersonaPicker
    from bot.core.store import Store
    from bot.core.usage import UsageReport

# A command as a person types it: (person, the words after its name) -> the answer in plain words.
Command = Callable[[str, str], Awaitable[str]]


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


@dataclass(frozen=True)
class SettingParts:
    """What the rows read (the store) and change settings through: each existing command, None
    where that part is not wired (its row is then left out)."""

    store: Store
    personas: PersonaPicker | None = None
    # /model: the chat's model among those the person may use.
    models: ModelPicker | None = None
    # /voice; `voice_available`: a speech voice is configured (else the row says it is not).
    voice: Command | None = None
    voice_available: bool = False
    # /proactive: check-ins and quiet hours.
    proactive: Command | None = None
    # /privacy: the training row; `default_training` is the consent of someone who never chose.
    privacy: Command | None = None
    default_training: bool = True
    usage: UsageReport | None = None
