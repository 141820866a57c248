"""Smoke test of bench/reply_budget.py: the tiny model (random weights: its replies are noise, and
it rarely ends one, so nearly every reply is cut), --quick, a real subprocess, the JSON it promises.
The numbers themselves come from full runs with the bundled model (see docs/configuration.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tiny_model import build_tiny_model

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("bench-reply-budget")
    return build_tiny_model(data_dir / "tiny", data_dir)


def test_reply_budget_bench_quick_run_prints_its_report(tiny_dir: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "bench.reply_budget", "--quick", "--model", str(tiny_dir)]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)  # stdout holds the JSON and nothing else
    assert report["benchmark"] == "reply_budget" and report["settings"]["budgets"] == [8, 16]
    assert report["settings"]["decoding"] == "greedy" and report["settings"]["prompts"] == 3
    for budget in ("8", "16"):
        result = report["results"][budget]
        assert result["replies"] == 3 and 0 <= result["cut"] <= 3
        assert result["cut_share"] == round(result["cut"] / 3, 3)
        assert 0.0 <= result["removed_share_of_cut_text"] <= 1.0
        assert set(result["reply_time"]) == {"p50_ms", "p95_ms", "max_ms", "n"}
        assert len(report["examples"][budget]) == 3
    assert report["results"]["16"]["reply_time"]["p50_ms"] > 0
    assert {"cuts_rarely", "trimming_keeps_most", "budget"} <= report["choice"].keys()
