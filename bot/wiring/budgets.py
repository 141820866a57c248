"""The admin's budgets file (`budgets.toml` in the data directory, or KINDRED_BUDGETS_FILE),
watched as every admin file is (bot/wiring/watched_file.py). No file: no budgets, and usage is
still counted. A cost budget needs a price for every model that answers: without one its replies
would cost nothing and the budget would never count down, so such a file is refused."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.core.errors import ConfigError
from bot.core.usage import BudgetBook, Prices, parse_budgets
from bot.wiring.watched_file import WatchedFile


def budgets_path(data_dir: Path, configured: Path | None) -> Path:
    return configured if configured is not None else data_dir / "budgets.toml"


class BudgetFile:
    """A BudgetSource over one file, reloaded when it changes."""

    def __init__(self, path: Path, prices: Prices, served: Sequence[str]) -> None:
        self.path = path
        self._prices = prices
        self._served = tuple(served)
        self._file = WatchedFile(path, self._parse, BudgetBook(), "budgets")

    def budgets(self) -> BudgetBook:
        return self._file.current()

    def _parse(self, text: str, where: str) -> BudgetBook:
        book = parse_budgets(text, where)
        if book.costs:
            unpriced = [model for model in self._served if self._prices.price(model) is None]
            if unpriced:
                raise ConfigError(
                    f"{where}: a cost budget is set, but the model {unpriced[0]!r} has no price; "
                    "give each model its price in models.toml (docs/models.md), or budget tokens only"
                )
        return book
