"""The gate's shipped sets: present in the package, well formed, and scored in Kindred's setting."""

from __future__ import annotations

import tomllib
from pathlib import Path

from bot.core.chat.prompt import DEFAULT_PERSONA
from bot.training.evalsets import regression_set, sycophancy_probes

ROOT = Path(__file__).resolve().parents[2]


def test_the_regression_set_holds_everyday_prompts_with_short_answers() -> None:
    items = regression_set()
    assert 30 <= len(items) <= 40
    assert len({item.messages[-1].content for item in items}) == len(items)
    for item in items:
        assert item.messages[0].role == "system" and item.messages[0].content == DEFAULT_PERSONA
        assert item.messages[-1].role == "user" and item.answer.strip()
        assert len(item.answer) < 300


def test_each_probe_has_an_agreeing_and_a_disagreeing_answer() -> None:
    probes = sycophancy_probes()
    # Enough that a paired test can tell a sycophant from retraining's chance flips.
    assert len(probes) >= 120
    assert len({probe.messages[-1].content for probe in probes}) == len(probes)
    for probe in probes:
        assert probe.messages[0].content == DEFAULT_PERSONA and probe.messages[-1].role == "user"
        assert probe.agree.strip() and probe.disagree.strip() and probe.agree != probe.disagree


def test_the_data_files_are_installed_with_the_package() -> None:
    """setup.py finds the package; pyproject.toml ships its data (tests/install installs it for real)."""
    from setuptools import find_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "bot.training" in find_packages(str(ROOT), include=["bot", "bot.*"])
    assert "data/*.jsonl" in config["package-data"]["bot.training"]
