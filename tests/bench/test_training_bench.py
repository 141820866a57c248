"""Smoke test of bench/training.py (the Python part of scripts/gpu_check.sh's training run): a
tiny model on the CPU, a real subprocess, the JSON it promises."""

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
    data_dir = tmp_path_factory.mktemp("bench-training")
    return build_tiny_model(data_dir / "tiny", data_dir)


def test_training_bench_quick_run_prints_its_report(tiny_dir: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "bench.training", "--quick", "--model", str(tiny_dir), "--device", "cpu"]
    done = subprocess.run(
        [*command, "--score", "--gpu-util"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    assert report["benchmark"] == "training" and report["settings"]["device"] == "cpu"
    results = report["results"]
    assert results["steps"] == 2 and results["tokens_per_s"] > 0 and len(results["steps_log"]) == 2
    assert "gpu_utilisation" in results  # None without nvidia-smi
    assert set(report["gate"]["checks"]) == {"heldout_margin", "regression_loss", "kl_to_base", "sycophancy"}
