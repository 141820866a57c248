"""The rows of /settings, each over the command that already sets its value. A new setting is
one class here (a key, its view, its apply) and one line in `standard_rows`.

A row reads the person's choice through the Store's roles and changes it through the command a
person would type (`SettingParts`): the screen and the commands cannot disagree, and this room
knows no other room's classes."""

from __future__ import annotations

from datetime import time

from bot.core.chat_models import ModelPicker
from bot.core.personas import PersonaPicker
from bot.core.settings.models import Choice, Command, RowView, SettingParts, Who
from bot.core.settings.screen import SettingRow
from bot.core.store import Store
from bot.core.usage import UsageReport

ON_OFF = (Choice("on", "on"), Choice("off", "off"))
# The quiet hours a button offers; `/proactive quiet 22:30-6:45` sets any other.
QUIET_PRESETS = ((21, 7), (22, 7), (22, 8), (23, 8), (0, 0))


def on_off(on: bool) -> str:
    return "on" if on else "off"


class PersonaRow:
    key = "persona"

    def __init__(self, picker: PersonaPicker) -> None:
        self.picker = picker

    async def view(self, who: Who) -> RowView:
        current = (await self.picker.persona(who.chat)).name
        names = self.picker.source.book().names
        choices = tuple(Choice(name, name) for name in names)
        where = "in this chat" if who.private_chat else "in this group, set by its admins"
        value = f"{current} ({where})"
        return RowView(self.key, "Persona", value, choices, current, "/persona NAME", group_wide=True)

    async def apply(self, who: Who, value: str) -> str:
        owner = who.person if who.private_chat else None
        return await self.picker.pick(who.chat, value, owner=owner, may_change=who.may_change_chat)


class ModelRow:
    key = "model"

    def __init__(self, picker: ModelPicker) -> None:
        self.picker = picker

    async def view(self, who: Who) -> RowView:
        menu = await self.picker.menu(who.chat, who.person)
        if not menu.names:
            return RowView(self.key, "Model", "the one model this Kindred has")
        where = "in this chat" if who.private_chat else "in this group, set by its admins"
        choices = tuple(Choice(name, name) for name in menu.names)
        value = f"{menu.current} ({where})"
        return RowView(self.key, "Model", value, choices, menu.current, "/model NAME", group_wide=True)

    async def apply(self, who: Who, value: str) -> str:
        owner = who.person if who.private_chat else None
        return await self.picker.pick(
            who.chat, who.person, value, owner=owner, may_change=who.may_change_chat
        )


class VoiceRow:
    key = "voice"
    name = "Spoken replies"

    def __init__(self, store: Store, command: Command, available: bool) -> None:
        self.store = store
        self.command = command
        self.available = available

    async def view(self, who: Who) -> RowView:
        if not self.available:
            return RowView(self.key, self.name, "not available here (no voice is configured)")
        on = await self.store.turns.speaks_replies(who.person)
        value = "on: text, then a voice note" if on else "off: text only"
        return RowView(self.key, self.name, value, ON_OFF, on_off(on), "/voice on|off")

    async def apply(self, who: Who, value: str) -> str:
        return await self.command(who.person, value)


class CheckInsRow:
    key = "checkins"

    def __init__(self, store: Store, command: Command) -> None:
        self.store = store
        self.command = command

    async def view(self, who: Who) -> RowView:
        on = (await self.store.proactive.proactive_settings(who.person)).enabled
        value = "on: I may write to you first" if on else "off: I write only when you do"
        return RowView(self.key, "Check-ins", value, ON_OFF, on_off(on), "/proactive on|off")

    async def apply(self, who: Who, value: str) -> str:
        return await self.command(who.person, value)


class QuietHoursRow:
    key = "quiet"

    def __init__(self, store: Store, command: Command) -> None:
        self.store = store
        self.command = command

    async def view(self, who: Who) -> RowView:
        settings = await self.store.proactive.proactive_settings(who.person)
        start, end = settings.quiet_start, settings.quiet_end
        zone = settings.timezone or "your time zone is not set: /proactive timezone NAME"
        value = "none" if start == end else f"{start:%H:%M}–{end:%H:%M}"
        current = next(
            (quiet_value(s, e) for s, e in QUIET_PRESETS if (time(s), time(e)) == (start, end)), None
        )
        choices = tuple(Choice(quiet_value(s, e), quiet_label(s, e)) for s, e in QUIET_PRESETS)
        command = "/proactive quiet 22:30-6:45 for other hours"
        return RowView(self.key, "Quiet hours", f"{value} ({zone})", choices, current, command)

    async def apply(self, who: Who, value: str) -> str:
        return await self.command(who.person, f"quiet {value}")


def quiet_value(start: int, end: int) -> str:
    return f"{start}-{end}"


def quiet_label(start: int, end: int) -> str:
    return "none" if start == end else f"{start:02d}–{end:02d}"


class TrainingRow:
    key = "training"

    def __init__(self, store: Store, command: Command, default: bool) -> None:
        self.store = store
        self.command = command
        self.default = default

    async def view(self, who: Who) -> RowView:
        consent = await self.store.learning.training_consent(who.person)
        on = self.default if consent is None else consent
        why = "the default here" if consent is None else "your choice"
        value = f"{on_off(on)} ({why})"
        return RowView(
            self.key, "Training with your replies", value, ON_OFF, on_off(on), "/privacy training on|off"
        )

    async def apply(self, who: Who, value: str) -> str:
        return await self.command(who.person, f"training {value}")


class UsageRow:
    """Shown, not set: the person's use, as /usage says it (budgets join it later)."""

    key = "usage"

    def __init__(self, report: UsageReport) -> None:
        self.report = report

    async def view(self, who: Who) -> RowView:
        said = await self.report.command(who.person)
        # /usage's lines after its title, on one line: the screen shows each row as one.
        value = "; ".join(line.rstrip(".") for line in said.splitlines()[1:]) or said
        return RowView(self.key, "Your use", value, command="/usage")

    async def apply(self, who: Who, value: str) -> str:
        return await self.report.command(who.person)


def standard_rows(parts: SettingParts) -> list[SettingRow]:
    """Every row whose part is wired, in the order the screen shows them."""
    rows: list[SettingRow] = []
    if parts.personas is not None:
        rows.append(PersonaRow(parts.personas))
    if parts.models is not None:
        rows.append(ModelRow(parts.models))
    if parts.voice is not None:
        rows.append(VoiceRow(parts.store, parts.voice, parts.voice_available))
    if parts.proactive is not None:
        rows += [CheckInsRow(parts.store, parts.proactive), QuietHoursRow(parts.store, parts.proactive)]
    if parts.privacy is not None:
        rows.append(TrainingRow(parts.store, parts.privacy, parts.default_training))
    if parts.usage is not None:
        rows.append(UsageRow(parts.usage))
    return rows
