"""budgets.toml: read whole, every mistake named with its place (a syntax error with its line),
tables laid over one another key by key; a cost budget refused while a model has no price; an
edit while running reloaded, or refused with the budgets before kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.core.chat_models import parse_models
from bot.core.errors import ConfigError
from bot.core.usage import BudgetBook, Limits, NoPrices, Price, parse_budgets
from bot.wiring.budgets import BudgetFile, ModelPrices

EXAMPLE = """
admins_exempt = true

[everyone]
tokens_per_day = 20000
tokens_per_month = 300000

[guests]
tokens_per_day = 2000

[groups]
tokens_per_day = 50000

[person."telegram:42"]
tokens_per_day = 100000
tokens_per_month = "unlimited"

[group."telegram:-100"]
cost_per_day = 0.5
"""


class OnePrice:
    currency = "EUR"

    def __init__(self, model: str) -> None:
        self.model = model

    def price(self, model: str) -> Price | None:
        return Price(0.15, 0.60) if model == self.model else None


def test_tables_are_laid_over_the_wider_ones_key_by_key() -> None:
    book = parse_budgets(EXAMPLE)
    assert book.person("telegram:1", "member") == Limits(20000, 300000)
    assert book.person("telegram:1", "guest") == Limits(2000)
    assert book.person("telegram:42", "member") == Limits(100000, None), "'unlimited' lifts everyone's month"
    assert book.person("telegram:7", "admin") == Limits(), "admins are exempt"
    assert book.group("telegram:-5") == Limits(50000)
    assert book.group("telegram:-100") == Limits(50000, cost_per_day=0.5)
    assert book.costs


def test_admins_count_when_the_file_says_so() -> None:
    book = parse_budgets("admins_exempt = false\n[everyone]\ntokens_per_day = 10\n")
    assert book.person("telegram:7", "admin") == Limits(10)


def test_no_file_and_an_empty_one_set_no_budget() -> None:
    assert parse_budgets("").empty and BudgetBook().person("telegram:1", "guest").empty


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[everyone\ntokens_per_day = 1\n", "line 1"),
        ("[everyone]\ntokens_per_day = 1\ntokens_per_day = 2\n", "line 3"),
        ("[everyone]\ntokens_per_day = 1.5\n", "tokens_per_day must be a whole number"),
        ("[everyone]\ncost_per_day = -1\n", "cost_per_day must be an amount"),
        ("[everyone]\ntokens_per_day = true\n", "tokens_per_day must be a whole number"),
        ("[everyone]\ntokens_per_week = 1\n", "unknown key 'tokens_per_week'"),
        ('[everyone]\ntokens_per_day = "unlimited"\n', "tokens_per_day must be a whole number"),
        ("[person.42]\ntokens_per_day = 1\n", "names its platform"),
        ("[somebody]\ntokens_per_day = 1\n", "unknown key 'somebody'"),
        ('admins_exempt = "no"\n', "admins_exempt must be true or false"),
    ],
)
def test_a_mistake_is_named_in_one_line(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_budgets(text, "/srv/budgets.toml")
    message = str(raised.value)
    assert message.startswith("/srv/budgets.toml") and says in message and "\n" not in message


def test_a_cost_budget_needs_a_price_for_the_model_that_answers(tmp_path: Path) -> None:
    path = tmp_path / "budgets.toml"
    path.write_text("[everyone]\ncost_per_month = 5\n")
    with pytest.raises(ConfigError, match="the model 'smol' has no price"):
        BudgetFile(path, NoPrices(), ["smol"])
    with pytest.raises(ConfigError, match="the model 'other' has no price"):
        BudgetFile(path, OnePrice("smol"), ["smol", "other"])
    assert BudgetFile(path, OnePrice("smol"), ["smol"]).budgets().person("telegram:1", "member") == Limits(
        cost_per_month=5.0
    )
    path.write_text("[everyone]\ntokens_per_day = 5\n")
    assert not BudgetFile(path, NoPrices(), ["smol"]).budgets().costs, "tokens need no price"


def test_an_edit_is_reloaded_and_a_broken_one_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "budgets.toml"
    budgets = BudgetFile(path, NoPrices(), ["smol"])
    assert budgets.budgets().empty, "no file: no budgets"
    path.write_text("[everyone]\ntokens_per_day = 100\n")
    assert budgets.budgets().everyone == Limits(100)
    path.write_text("[everyone]\ntokens_per_day = 100\ncost_per_day = 1\n")  # no price: refused
    os.utime(path, ns=(1, 1))
    assert budgets.budgets().everyone == Limits(100), "the budgets before stay"
    assert any("edit is refused" in r.getMessage() and "no price" in r.getMessage() for r in caplog.records)
    path.write_text("[everyone]\ntokens_per_day = 7\n")
    assert budgets.budgets().everyone == Limits(7)


def test_the_documented_example_loads_as_written() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "budgets.example.toml").read_text()
    book = parse_budgets(text, "docs/budgets.example.toml")
    assert book.person("telegram:5", "member") == Limits(20000, 300000)
    assert book.person("telegram:5", "guest") == Limits(2000, 10000)
    assert book.person("telegram:123456789", "member") == Limits(100000, None)
    assert book.group("telegram:-1001234567890") == Limits(200000)
    assert not book.costs


MODELS = """
currency = "EUR"
[[model]]
name = "mini"
backend = "openai"
url = "http://127.0.0.1:9/v1"
model = "gpt-mini"
price_in = 0.15
price_out = 0.60
[[model]]
name = "free"
backend = "openai"
url = "http://127.0.0.1:9/v1"
model = "local-llama"
"""


def test_a_models_list_missing_a_price_refuses_a_cost_budget(tmp_path: Path) -> None:
    """The prices come from models.toml: a listed model without one, under a cost budget, stops
    the start naming it; with tokens only, it costs nothing and starts."""
    book = parse_models(MODELS)
    prices = ModelPrices(lambda: book, "bundled", lambda entry: False)
    assert prices.price("gpt-mini") == Price(0.15, 0.60) == prices.price("mini")
    assert prices.price("local-llama") is None and prices.currency == "EUR"
    path = tmp_path / "budgets.toml"
    path.write_text("[everyone]\ncost_per_day = 1\n")
    with pytest.raises(ConfigError, match="the model 'bundled' has no price"):
        BudgetFile(path, prices, prices.served())
    priced = ModelPrices(lambda: book, "bundled", lambda entry: entry.name == "mini")
    assert priced.price("bundled") == Price(0.15, 0.60), "the configured model is the listed 'mini'"
    with pytest.raises(ConfigError, match="the model 'local-llama' has no price"):
        BudgetFile(path, priced, priced.served())
    path.write_text("[everyone]\ntokens_per_day = 1000\n")
    assert BudgetFile(path, priced, priced.served()).budgets().everyone == Limits(1000)


def test_guests_have_everyones_budget_without_a_table_of_their_own() -> None:
    book = parse_budgets("[everyone]\ntokens_per_day = 500\n")
    assert book.person("telegram:9", "guest") == Limits(500)
