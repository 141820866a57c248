"""Usage: what each person (and group chat) used, counted always, budget or none ([personal])."""

from bot.core.usage.meter import UsageMeter
from bot.core.usage.models import USAGE_KINDS, UsageDay, UsageKind, UsageRecord
from bot.core.usage.ports import UsageLog
from bot.core.usage.report import UsageReport

__all__ = ["USAGE_KINDS", "UsageDay", "UsageKind", "UsageLog", "UsageMeter", "UsageRecord", "UsageReport"]
