"""Usage: what each person (and group chat) used, counted always, budget or none, and the
budgets that bound it ([personal])."""

from bot.core.usage.allowance import Allowance, Held, OutOfBudget, Standing
from bot.core.usage.budgets import BudgetBook, Limits, Tier, parse_budgets
from bot.core.usage.meter import NoPrices, UsageMeter, ZoneCache
from bot.core.usage.models import USAGE_KINDS, Spent, UsageDay, UsageKind, UsageRecord
from bot.core.usage.ports import BudgetSource, Holds, Price, Prices, UsageLog, Zones
from bot.core.usage.report import UsageReport
from bot.core.usage.zones import StoreZones, store_meter

__all__ = [
    "USAGE_KINDS", "Allowance", "BudgetBook", "BudgetSource", "Held", "Holds", "Limits", "NoPrices",
    "OutOfBudget", "Price", "Prices", "Spent", "Standing", "StoreZones", "Tier", "UsageDay", "UsageKind",
    "UsageLog", "UsageMeter", "UsageRecord", "UsageReport", "ZoneCache", "Zones", "parse_budgets",
    "store_meter",
]  # fmt: skip
