"""The settings screen over rows of its own: a row whose store is away is shown as unreadable
and a change to it answers so (the other rows still show); a group sees only group-wide rows, and
a person's own row is not changed there; a read-only row is shown, never set."""

from __future__ import annotations

from bot.core.errors import StoreUnavailable
from bot.core.settings import Choice, RowView, SettingsScreen, Who
from bot.core.settings.screen import CANNOT_READ, NOT_HERE, STORE_DOWN, WEB_NOT_SET_UP

ALONE = Who("p", "p", private_chat=True, only_they_see=True)
GROUP = Who("p", "g", private_chat=False, only_they_see=False, may_change_chat=False)


class Row:
    def __init__(
        self, key: str, *, group_wide: bool = False, away: bool = False, choices: bool = True
    ) -> None:
        self.key, self.group_wide, self.away, self.choices = key, group_wide, away, choices
        self.applied: list[tuple[Who, str]] = []

    async def view(self, who: Who) -> RowView:
        if self.away:
            raise StoreUnavailable("the store is away")
        offered = (Choice("on", "on"), Choice("off", "off")) if self.choices else ()
        return RowView(self.key, self.key.title(), "on", offered, "on", f"/{self.key}", self.group_wide)

    async def apply(self, who: Who, value: str) -> str:
        if self.away:
            raise StoreUnavailable("the store is away")
        self.applied.append((who, value))
        return f"{self.key} is {value}"


async def test_a_row_whose_store_is_away_is_unreadable_and_not_changed() -> None:
    away, fine = Row("away", away=True), Row("fine")
    screen = SettingsScreen([away, fine])
    text = await screen.text(ALONE)
    assert f"• away: {CANNOT_READ}" in text and "• Fine: on (/fine)" in text
    assert await screen.choose(ALONE, "away", "on") == STORE_DOWN and away.applied == []
    assert await screen.choose(ALONE, "FINE", " OFF ") == "fine is off"


async def test_a_store_lost_between_reading_and_writing_answers_so() -> None:
    row = Row("flaky")
    screen = SettingsScreen([row])

    async def fails(who: Who, value: str) -> str:
        raise StoreUnavailable("gone")

    row.apply = fails  # type: ignore[method-assign]
    assert await screen.choose(ALONE, "flaky", "off") == STORE_DOWN


async def test_a_group_sees_and_changes_only_its_own_rows() -> None:
    personal, chat = Row("personal"), Row("chat", group_wide=True)
    screen = SettingsScreen([personal, chat])
    text = await screen.text(GROUP)
    assert "• Chat: on" in text and "Personal" not in text and text.startswith("This chat's settings")
    assert await screen.choose(GROUP, "personal", "off") == NOT_HERE and personal.applied == []
    assert await screen.choose(GROUP, "chat", "off") == "chat is off"
    assert chat.applied == [(GROUP, "off")]  # the row decides with may_change_chat
    assert screen.web_link(GROUP) == WEB_NOT_SET_UP


async def test_a_shown_row_is_never_set() -> None:
    shown = Row("usage", choices=False)
    screen = SettingsScreen([shown])
    assert await screen.choose(ALONE, "usage", "on") == "Usage is shown here, not set: on"
    assert shown.applied == []
