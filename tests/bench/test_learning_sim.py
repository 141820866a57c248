"""Smoke test of bench/learning_sim.py: the whole loop (chat, reactions, the nightly job, the gate,
the measurement, the plot) on a tiny random model, in a real subprocess, with the JSON it promises.

A random model cannot learn a taste in two steps; what this proves is that the pipeline runs end to
end and reports honestly. The numbers come from the real model (docs/benchmarks.md, "Learning")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.bench.test_training_bench import tiny_dir  # noqa: F401  (the module's tiny model)

ROOT = Path(__file__).resolve().parents[2]


def test_a_random_teacher_night_runs_end_to_end_and_promotes_nothing(tiny_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    plot = tmp_path / "curve.png"
    command = [
        sys.executable, "-m", "bench.learning_sim", "--quick", "--teacher", "random",
        "--model", str(tiny_dir), "--data-dir", str(tmp_path / "data"), "--plot", str(plot),
        "--people", "2", "--candidates", "4", "--eval-prompts", "4", "--train-steps", "2",
        "--heldout-share", "0.25",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("lift_points", "rates", "promoted", "noise", "teacher", "minutes"):
        assert key in report
    assert report["teacher"] == "random" and report["noise"] == 0.1
    assert len(report["rates"]) == len(report["promoted"]) == 1
    [night] = report["nights"]
    assert night["status"] == "succeeded", night["message"]  # it trained and the gate judged it
    assert set(night["gate"]["checks"]) == {"heldout_margin", "regression_loss", "kl_to_base", "sycophancy"}
    assert report["promoted"] == [False] and report["checks"]["random_teacher_promotes_nothing"]["passed"]
    assert report["days"][0]["replies"] == 2 * 4 * 4
    assert report["plan"]["heldout_share"] == 0.25
    assert plot.stat().st_size > 1000
