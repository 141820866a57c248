"""What a command checks before it acts, the same on every platform: who may use it and whether
its part is wired. Each gate returns the part to use, or the refusal to show instead."""

from __future__ import annotations

from bot.adapters.base import Services
from bot.core.learning.commands import ADMINS_ONLY, NOT_WIRED, TrainingCommands
from bot.core.memory.controls import APP_SOON
from bot.core.miniapps.commands import AppCommands
from bot.core.proactive.commands import PROACTIVE_NOT_WIRED, ProactiveCommands


def training_for(services: Services, person: str) -> TrainingCommands | str:
    """The admins' learning commands. The admin check comes first, so nobody else learns
    whether learning is wired here."""
    if not services.access.is_admin(person):
        return ADMINS_ONLY
    if services.training is None:
        return NOT_WIRED
    return services.training


def miniapps_of(services: Services) -> AppCommands | str:
    return APP_SOON if services.apps is None else services.apps


def proactive_of(services: Services) -> ProactiveCommands | str:
    return PROACTIVE_NOT_WIRED if services.proactive is None else services.proactive
