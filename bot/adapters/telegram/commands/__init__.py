"""Telegram's slash commands and their buttons, one module per feature; each feature registers
its own handlers. The answers come from the core; these only render."""

from __future__ import annotations

from telegram import BotCommand

from bot.adapters.base import Services
from bot.adapters.telegram.commands.admin import Admin
from bot.adapters.telegram.commands.feature import Handler
from bot.adapters.telegram.commands.general import General, unknown_command_text
from bot.adapters.telegram.commands.learning import Learning
from bot.adapters.telegram.commands.memory import Memory
from bot.adapters.telegram.commands.miniapps import Miniapps
from bot.adapters.telegram.commands.model import Models
from bot.adapters.telegram.commands.persona import Personas
from bot.adapters.telegram.commands.privacy import Privacy
from bot.adapters.telegram.commands.proactive import Proactive
from bot.adapters.telegram.commands.settings import Settings
from bot.adapters.telegram.commands.usage import Usage
from bot.adapters.telegram.commands.voice import Voice
from bot.core.memory.controls import COMMANDS

__all__ = ["bot_commands", "command_handlers", "unknown_command_text"]


def bot_commands() -> list[BotCommand]:
    return [BotCommand(command.name, command.description) for command in COMMANDS]


def command_handlers(services: Services) -> list[Handler]:
    """Every feature's handlers, then the answer to a command none of them took."""
    general = General(services)
    features = (general, Personas(services), Models(services), Memory(services), Privacy(services),
                Voice(services), Usage(services), Settings(services), Miniapps(services), Proactive(services),
                Learning(services), Admin(services))  # fmt: skip
    return [*(handler for feature in features for handler in feature.handlers()), general.fallback()]
