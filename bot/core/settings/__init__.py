"""One settings screen ([personal] 4): a person's choices gathered as rows, each applied through
the command that already sets it; platforms render the rows (screen.py, rows.py), and the web
page is reached through a signed, expiring link (links.py)."""

from bot.core.settings.links import LinkClaim, SettingsLinks, derived_key
from bot.core.settings.models import Choice, Command, RowView, SettingParts, Who
from bot.core.settings.rows import standard_rows
from bot.core.settings.screen import SettingRow, SettingsScreen

__all__ = [
    "Choice",
    "Command",
    "LinkClaim",
    "RowView",
    "SettingParts",
    "SettingRow",
    "SettingsLinks",
    "SettingsScreen",
    "Who",
    "derived_key",
    "standard_rows",
]
