"""The admin's budgets file (`budgets.toml` in the data directory, or KINDRED_BUDGETS_FILE),
watched as every admin file is (bot/wiring/watched_file.py). No file: no budgets, and usage is
still counted. A cost budget needs a price for every model that answers: without one its replies
would cost nothing and the budget would never count down, so such a file is refused."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from bot.core.chat_models import ChatModel, ModelBook
from bot.core.errors import ConfigError
from bot.core.usage import BudgetBook, Price, Prices, parse_budgets
from bot.wiring.watched_file import WatchedFile


def budgets_path(data_dir: Path, configured: Path | None) -> Path:
    return configured if configured is not None else data_dir / "budgets.toml"


class BudgetFile:
    """A BudgetSource over one file, reloaded when it changes."""

    def __init__(self, path: Path, prices: Prices, served: Sequence[str]) -> None:
        self.path = path
        self._prices = prices
        self._served = tuple(served)
        self._file = WatchedFile(path, self._parse, BudgetBook(), what="budgets")

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


class ModelPrices:
    """The models list's prices, by the name a reply's record gives its model: a listed model's id
    (or its name), and the configured model's name for the entry that is the configured model."""

    def __init__(
        self, book: Callable[[], ModelBook], configured: str, is_configured: Callable[[ChatModel], bool]
    ) -> None:
        self._book = book
        self._configured = configured
        self._is_configured = is_configured

    @property
    def currency(self) -> str:
        return self._book().currency

    def price(self, model: str) -> Price | None:
        for entry in self._book().models:
            named = model in (entry.name, entry.model)
            if named or (model == self._configured and self._is_configured(entry)):
                if entry.price_in is None or entry.price_out is None:
                    return None
                return Price(entry.price_in, entry.price_out)
        return None

    def served(self) -> list[str]:
        """Every model that may answer: the configured one and each listed one."""
        return [
            self._configured,
            *(entry.model for entry in self._book().models if not self._is_configured(entry)),
        ]
