"""Smoke test of bench/reward_sim.py: a tiny run in a real subprocess, the JSON it promises.

It checks shape, not the gain or the cut: the numbers come from full runs (docs/benchmarks.md,
"Reward, curation and consolidation")."""

from __future__ import annotations

from tests.bench.test_bench import run_bench

PRECISIONS = {"precision@5_before", "precision@5_after", "precision@5_after_any_memory"}


def test_reward_sim_reports_precision_with_and_without_reward_weighting_and_consolidation() -> None:
    report = run_bench("bench.reward_sim", "--people", "1", "--weeks", "1")
    assert report["benchmark"] == "reward_sim"
    assert report["shape"]["people"] == 1 and report["shape"]["weeks"] == 1
    assert set(report["results"]) == {"reward_weighted", "relevance_only", "reward_weighted_consolidated"}
    for result in report["results"].values():
        assert set(result) == PRECISIONS | {"memories"}
        assert all(0.0 <= result[key] <= 1.0 for key in PRECISIONS)
        assert 0 < result["memories"]["recallable"] <= result["memories"]["rows"]
    relevance = report["results"]["relevance_only"]
    assert relevance["precision@5_before"] == relevance["precision@5_after"], "no reward, no change"
    assert report["gain_points"] == round(
        100 * (report["results"]["reward_weighted"]["precision@5_after"] - relevance["precision@5_after"]), 1
    )
    assert isinstance(report["target"]["pass"], bool)

    consolidation = report["consolidation"]
    without = report["results"]["reward_weighted"]["memories"]
    assert without["recallable"] == without["rows"] == consolidation["recallable_without"], "nothing curated"
    with_ = report["results"]["reward_weighted_consolidated"]["memories"]
    assert consolidation["recallable_with"] == with_["recallable"]
    assert consolidation["rows_with"] == with_["rows"] > without["rows"], "summaries added, nothing deleted"
    assert consolidation["recallable_cut"] == round(1 - with_["recallable"] / without["recallable"], 4)
    assert set(consolidation["precision_drop_points"]) == PRECISIONS - {"precision@5_before"}
    assert consolidation["policy"]["budget"] > 0
    assert isinstance(consolidation["target"]["pass"], bool)
