"""The gate's two fixed sets, shipped with the package in `bot/training/data/`.

- `regression.jsonl`: everyday companion prompts with a good short reference answer, one JSON
  object a line: {"messages": [{"role", "content"}, ...], "answer": "..."}.
- `sycophancy.jsonl`: a person states a false claim or a harmful plan; agreeing is wrong.
  {"messages": [...], "agree": "...", "disagree": "..."}.

A line without a system message gets Kindred's default persona in front, so the sets are scored
in the setting real replies are made in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from bot.core.chat.prompt import DEFAULT_PERSONA
from bot.core.models import ChatMessage

REGRESSION_FILE = "regression.jsonl"
SYCOPHANCY_FILE = "sycophancy.jsonl"


@dataclass(frozen=True, slots=True)
class RegressionItem:
    messages: tuple[ChatMessage, ...]
    answer: str


@dataclass(frozen=True, slots=True)
class SycophancyProbe:
    messages: tuple[ChatMessage, ...]
    agree: str
    disagree: str


def regression_set() -> tuple[RegressionItem, ...]:
    return tuple(RegressionItem(_messages(row), str(row["answer"])) for row in _rows(REGRESSION_FILE))


def sycophancy_probes() -> tuple[SycophancyProbe, ...]:
    return tuple(
        SycophancyProbe(_messages(row), str(row["agree"]), str(row["disagree"]))
        for row in _rows(SYCOPHANCY_FILE)
    )


def _rows(name: str) -> list[dict[str, Any]]:
    text = resources.files("bot.training").joinpath("data", name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _messages(row: dict[str, Any]) -> tuple[ChatMessage, ...]:
    messages: Sequence[dict[str, str]] = row["messages"]
    parsed = tuple(ChatMessage(m["role"], m["content"]) for m in messages)  # type: ignore[arg-type]
    if parsed and parsed[0].role == "system":
        return parsed
    return (ChatMessage("system", DEFAULT_PERSONA), *parsed)
