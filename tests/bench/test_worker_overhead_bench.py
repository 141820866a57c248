"""Smoke test of bench/worker_overhead.py --quick on SQLite: the JSON it promises, and that the
per-task figures are Celery's own for tasks that really ran (docs/benchmarks.md has the numbers)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.procs

ROOT = Path(__file__).resolve().parents[2]


def test_worker_overhead_quick_reports_each_task_and_the_target() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.worker_overhead", "--quick", "--store", "sqlite"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)  # stdout holds the JSON and nothing else
    assert report["benchmark"] == "worker_overhead" and report["settings"]["tasks"] == 30
    task, trip = report["task"], report["round_trip"]
    assert task["n"] == trip["n"] == 30
    assert 0 < task["p50_ms"] <= task["p95_ms"] <= task["max_ms"]
    assert task["p50_ms"] < trip["p50_ms"]  # the task runs inside its round trip
    assert report["pg_sessions_opened"] is None and report["target_p95_ms"] == 20.0
    assert report["met"] == (task["p95_ms"] <= 20.0)
