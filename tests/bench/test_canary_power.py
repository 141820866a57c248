"""Smoke test of bench/canary_power.py: a quick run in a real subprocess, the JSON it promises.

The numbers themselves are pinned where they are computed (tests/core/learning_stats)."""

from __future__ import annotations

from tests.bench.test_bench import run_bench


def test_canary_power_reports_replies_for_power_at_both_shares() -> None:
    report = run_bench("bench.canary_power", "--quick")
    assert report["benchmark"] == "canary_power"
    assert report["settings"]["seeds"] == 300 and report["settings"]["policy"]["alpha"] == 0.01
    needed = report["replies_for_power"]
    assert set(needed) == {"share_0.5", "share_0.2"}
    # A smaller canary share needs more replies for the same power.
    assert 0 < needed["share_0.5"] < needed["share_0.2"]
    assert all(0.0 <= share <= 1.0 for share in report["power_on_fresh_days"].values())
    false_promotions = report["false_promotions_alike_arms"]
    assert false_promotions["replies"] == 600
    assert false_promotions["share_0.5"] <= 0.05 and false_promotions["share_0.2"] <= 0.05
