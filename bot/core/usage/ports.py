"""The usage room's boundary: where the records are kept, so that every process sees them; the
replies in flight that a budget holds room for; the prices; and the person's time zone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal, Protocol

from bot.core.usage.budgets import BudgetBook
from bot.core.usage.models import Spent, UsageDay, UsageRecord


class UsageLog(Protocol):
    """Usage records, summed per person (on their own days) and per group chat (on UTC days)."""

    async def record(self, record: UsageRecord) -> None:
        """Keep one use, counted on `record.day` (else the UTC day of `record.at`)."""
        ...

    async def days(self, first: date, last: date, who: str | None = None) -> list[UsageDay]:
        """Each person's and each group chat's totals per day from `first` to `last`, both
        included, ordered by day then who (people before groups); only days with a use. `who`:
        only that person's rows, or that group chat's."""
        ...

    async def spent(self, who: str, day: date, *, group: bool = False) -> tuple[Spent, Spent]:
        """What one person (or group chat) used on `day` and in its month."""
        ...

    async def records(self, user_id: str) -> list[UsageRecord]:
        """Every record of one person, oldest first (for /export)."""
        ...


@dataclass(frozen=True, slots=True)
class Price:
    """Per 1M tokens, in the price list's currency."""

    tokens_in: float
    tokens_out: float

    def of(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.tokens_in + tokens_out * self.tokens_out) / 1_000_000


class Prices(Protocol):
    """The admin's prices per model (the models list, [personal] 3)."""

    @property
    def currency(self) -> str: ...

    def price(self, model: str) -> Price | None:
        """None: no price given for `model` (its use costs nothing in a budget)."""
        ...


class BudgetSource(Protocol):
    def budgets(self) -> BudgetBook:
        """The budgets as they are now (a file may have been edited)."""
        ...


Measure = Literal["tokens", "cost"]


@dataclass(frozen=True, slots=True)
class Check:
    """One limit a hold must leave room under: `used` in the period plus what is held already."""

    measure: Measure
    used: float
    limit: float


class Holds(Protocol):
    """Room held for the replies in flight, shared by every replica where they share Redis."""

    async def take(self, subject: str, hold_id: str, tokens: int, cost: float, checks: list[Check]) -> bool:
        """Hold `tokens` and `cost` for `subject` (a person or a group chat) unless a check's
        `used` plus the room already held reaches its limit; atomic across replicas. A hold
        lapses by itself after a while (a replica that died mid-reply)."""
        ...

    async def release(self, subject: str, hold_id: str) -> None: ...


class Zones(Protocol):
    async def zone(self, user_id: str) -> str | None:
        """The person's IANA time zone, where they told it; None otherwise."""
        ...
