"""The admin's budgets, read from TOML text (`budgets.toml`): tokens (in and out together) and
cost, per day and per month, for everyone, for guests, for each group chat, and for one person or
one group in place of those.

A key left out sets no limit on that measure; "unlimited" lifts one that a wider table sets. A
person's own table, or a group's, is laid over the table it would otherwise have (everyone's or
guests', groups'), key by key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from bot.core.errors import ConfigError

# Who a person is to their budget: an admin (exempt unless the file says otherwise), someone the
# allowlist lets in (or anyone where there is none), or a guest (KINDRED_GUESTS=on).
Tier = Literal["admin", "member", "guest"]
UNLIMITED = "unlimited"
_TABLES = {"everyone", "guests", "groups", "person", "group"}
_TOP = {"admins_exempt", *_TABLES}


@dataclass(frozen=True, slots=True)
class Limits:
    """One budget; None: no limit on that measure."""

    tokens_per_day: int | None = None
    tokens_per_month: int | None = None
    cost_per_day: float | None = None
    cost_per_month: float | None = None

    @property
    def empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))

    @property
    def costs(self) -> bool:
        return self.cost_per_day is not None or self.cost_per_month is not None


_NAMES = tuple(f.name for f in fields(Limits))
NO_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class BudgetBook:
    everyone: Limits = NO_LIMITS
    guests: Limits = NO_LIMITS
    groups: Limits = NO_LIMITS
    # One person's or one group chat's table, by id, as set keys only (laid over the wider one).
    people: dict[str, dict[str, Any]] = field(default_factory=dict)
    group_chats: dict[str, dict[str, Any]] = field(default_factory=dict)
    admins_exempt: bool = True

    def person(self, user_id: str, tier: Tier) -> Limits:
        """The budget of one person of that tier (no limits for an exempt admin)."""
        if tier == "admin" and self.admins_exempt and user_id not in self.people:
            return NO_LIMITS
        wider = self.guests if tier == "guest" else self.everyone
        return _over(wider, self.people.get(user_id, {}))

    def group(self, group_id: str) -> Limits:
        return _over(self.groups, self.group_chats.get(group_id, {}))

    @property
    def costs(self) -> bool:
        """Whether any budget counts cost (then every model needs a price)."""
        tables = [self.everyone, self.guests, self.groups]
        overrides = [*self.people.values(), *self.group_chats.values()]
        return any(t.costs for t in tables) or any(
            o.get(k) not in (None, UNLIMITED) for o in overrides for k in ("cost_per_day", "cost_per_month")
        )

    @property
    def empty(self) -> bool:
        return self == BudgetBook()


def _over(wider: Limits, own: dict[str, Any]) -> Limits:
    return replace(wider, **{k: None if v == UNLIMITED else v for k, v in own.items()})


def parse_budgets(text: str, where: str = "budgets.toml") -> BudgetBook:
    """The budgets in `text`. Raises ConfigError with one line naming `where` and what is wrong
    (tomllib's message, with its line and column, for a syntax error)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP))})")
    exempt = data.get("admins_exempt", True)
    if not isinstance(exempt, bool):
        raise ConfigError(f"{where}: admins_exempt must be true or false")
    everyone = Limits(**_keys(data.get("everyone", {}), f"{where}: [everyone]", lift=False))
    return BudgetBook(
        everyone=everyone,
        # No [guests]: guests have everyone's budget, never more than the people let in.
        guests=Limits(**_keys(data["guests"], f"{where}: [guests]", lift=False))
        if "guests" in data
        else everyone,
        groups=Limits(**_keys(data.get("groups", {}), f"{where}: [groups]", lift=False)),
        people=_by_id(data.get("person", {}), f"{where}: [person"),
        group_chats=_by_id(data.get("group", {}), f"{where}: [group"),
        admins_exempt=exempt,
    )


def _by_id(tables: Any, place: str) -> dict[str, dict[str, Any]]:
    if not isinstance(tables, dict):
        raise ConfigError(f'{place}] must be tables, as [person."telegram:42"]')
    found: dict[str, dict[str, Any]] = {}
    for who, table in tables.items():
        where = f'{place}."{who}"]'
        if ":" not in who:
            raise ConfigError(f"{where}: an id names its platform, as telegram:42 or discord:42")
        found[who] = _keys(table, where, lift=True)
    return found


def _keys(table: Any, place: str, *, lift: bool) -> dict[str, Any]:
    """A table's limits as checked keys: whole tokens, cost as a number, none below 0."""
    if not isinstance(table, dict):
        raise ConfigError(f"{place} must be a table")
    unknown = sorted(set(table) - set(_NAMES))
    if unknown:
        raise ConfigError(f"{place} has an unknown key {unknown[0]!r} (known: {', '.join(_NAMES)})")
    keys: dict[str, Any] = {}
    for name, value in table.items():
        if lift and value == UNLIMITED:
            keys[name] = UNLIMITED
            continue
        whole = name.startswith("tokens")
        valid = isinstance(value, int) if whole else isinstance(value, int | float)
        if isinstance(value, bool) or not valid or value < 0:
            kind = "a whole number of tokens" if whole else "an amount in the prices' currency"
            also = f' or "{UNLIMITED}"' if lift else ""
            raise ConfigError(f"{place}: {name} must be {kind}, 0 or more{also}")
        keys[name] = value if whole else float(value)
    return keys
