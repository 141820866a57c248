"""Smoke test of bench/proactive_sim.py: a tiny run in a real subprocess, the JSON it promises.

It checks shape and the one number that must hold at any size: no composer (model) call for people
who turned proactive off. Precision, recall and the message rate come from full runs (docs/proactive.md).
"""

from __future__ import annotations

from tests.bench.test_bench import run_bench

HEADLINE = {"precision", "recall", "messages_per_person_week", "model_calls_when_off"}


def test_proactive_sim_reports_detections_messages_and_no_model_calls_when_off() -> None:
    report = run_bench("bench.proactive_sim", "--quick", "--people", "6", "--weeks", "5")
    assert report["benchmark"] == "proactive_sim"
    assert report["shape"]["people_per_seed"] == 6 and report["shape"]["weeks"] == 5
    assert set(report["shape"]["dev_seeds"]).isdisjoint(report["shape"]["test_seeds"])
    assert report.keys() >= HEADLINE and set(report["targets"]) >= HEADLINE
    for result in (report["dev"], report["test"]):
        assert result["model_calls_when_off"] == 0 and result["proactive_occasions_when_off"] == 0
        assert 0.0 <= result["precision"] <= 1.0 and 0.0 <= result["recall"] <= 1.0
        assert result["reminders"]["sent"] <= result["reminders"]["stored"]
        assert set(result["per_trigger"]) == {"long_session", "habit", "follow_up"}
    assert {key: report[key] for key in HEADLINE} == {key: report["test"][key] for key in HEADLINE}
    assert isinstance(report["targets"]["pass"], bool)
