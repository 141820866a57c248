"""Smoke test of bench/reward_sim.py: a tiny run in a real subprocess, the JSON it promises.

It checks shape, not the gain: the numbers come from full runs (bot/core/MEMORY_README.md)."""

from __future__ import annotations

from tests.test_bench import run_bench


def test_reward_sim_reports_precision_with_and_without_reward_weighting() -> None:
    report = run_bench("bench.reward_sim", "--people", "1", "--weeks", "1")
    assert report["benchmark"] == "reward_sim"
    assert report["shape"]["people"] == 1 and report["shape"]["weeks"] == 1
    assert set(report["results"]) == {"reward_weighted", "relevance_only"}
    for result in report["results"].values():
        assert set(result) == {"precision@5_before", "precision@5_after"}
        assert all(0.0 <= value <= 1.0 for value in result.values())
    relevance = report["results"]["relevance_only"]
    assert relevance["precision@5_before"] == relevance["precision@5_after"], "no reward, no change"
    assert report["gain_points"] == round(
        100 * (report["results"]["reward_weighted"]["precision@5_after"] - relevance["precision@5_after"]), 1
    )
    assert isinstance(report["target"]["pass"], bool)
