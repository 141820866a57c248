"""/settings: a person's choices gathered on one screen, the same on every platform.

The screen is a list of rows. A row knows one setting: its name, its value now in words, its
choices, and how a choice is applied, always through the command that already sets it (/persona,
/voice, /proactive, /privacy), so the screen and the command can never disagree. Platforms only
render the rows (a keyboard, select menus, a web form, lines of text) and hand a choice back.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from bot.core.errors import StoreUnavailable
from bot.core.settings.links import SettingsLinks
from bot.core.settings.models import RowView, Who

log = logging.getLogger(__name__)

TITLE = "Your settings"
GROUP_TITLE = "This chat's settings"
PERSONAL_ELSEWHERE = (
    "Your own settings (spoken replies, check-ins, training, your use): /settings in our private chat."
)
CANNOT_READ = "can't be read right now (my store is unavailable)"
STORE_DOWN = "I can't change that right now (my store is unavailable); try again soon."
NOT_HERE = "For your privacy I only change that in our private chat. Write to me directly."
WEB_NOT_HERE = "The web page sets your own settings, so I give its link only in our private chat."
WEB_LINK = "Your settings page, for you alone (it works for {minutes} minutes; don't share it):\n{url}"
WEB_NOT_SET_UP = "The settings web page is not set up here (it needs Kindred's web server and a bot token)."


class SettingRow(Protocol):
    """One setting. `view` None: not offered here (its part is not wired)."""

    key: str

    async def view(self, who: Who) -> RowView | None: ...

    async def apply(self, who: Who, value: str) -> str:
        """Set `value`, one of the view's choices, through the setting's own command; the
        answer in plain words."""
        ...


class SettingsScreen:
    def __init__(self, rows: Sequence[SettingRow], links: SettingsLinks | None = None) -> None:
        self.rows = tuple(rows)
        self.links = links

    async def views(self, who: Who) -> list[RowView]:
        """The rows shown to `who`: every wired one where only they see it; else only the chat's."""
        shown: list[RowView] = []
        for row in self.rows:
            try:
                view = await row.view(who)
            except StoreUnavailable as exc:
                log.warning("settings: cannot read %s's %s (%s)", who.person, row.key, exc)
                view = RowView(row.key, row.key, CANNOT_READ)
            if view is not None and (who.only_they_see or view.group_wide):
                shown.append(view)
        return shown

    async def text(self, who: Who, answer: str = "") -> str:
        """The screen in words: the answer to a choice first, when there is one."""
        return listing(await self.views(who), who, answer)

    async def choose(self, who: Who, key: str, value: str) -> str:
        """A choice made on the screen (or typed after /settings), applied by its row, or why not."""
        row = next((r for r in self.rows if r.key == key.strip().lower()), None)
        try:
            view = await row.view(who) if row is not None else None
        except StoreUnavailable:
            return STORE_DOWN
        if row is None or view is None:
            names = ", ".join(v.key for v in await self.views(who))
            return f"I have no setting called {' '.join(key.split())[:30]!r}. There are: {names}."
        if not (who.only_they_see or view.group_wide):
            return NOT_HERE
        if not view.choices:
            return f"{view.name} is shown here, not set: {view.value}"
        choice = view.choice(value)
        if choice is None:
            offered = ", ".join(c.value for c in view.choices)
            shown = " ".join(value.split())[:40]
            return f"{view.name} can't be {shown!r}; it can be: {offered}. {view.command}".rstrip()
        try:
            return await row.apply(who, choice.value)
        except StoreUnavailable:
            return STORE_DOWN

    def web_link(self, who: Who) -> str:
        """/settings web: a link to the same settings as a page, or why there is none."""
        if self.links is None:
            return WEB_NOT_SET_UP
        if not who.private_chat:
            return WEB_NOT_HERE
        url = self.links.link(who.person, who.chat)
        return WEB_LINK.format(minutes=self.links.minutes, url=url)


def listing(views: Sequence[RowView], who: Who, answer: str = "") -> str:
    lines = [answer, ""] if answer else []
    lines.append(TITLE if who.only_they_see else GROUP_TITLE)
    for view in views:
        how = f" ({view.command})" if view.command else ""
        lines.append(f"• {view.name}: {view.value}{how}")
    if not who.only_they_see:
        lines.append(PERSONAL_ELSEWHERE)
    return "\n".join(lines)
