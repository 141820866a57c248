"""Smoke test of bench/sycophancy_refusals.py: a tiny model on the CPU, a real subprocess, one line
per seed appended to its file, a second run that resumes it, and the JSON summary it promises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.training.evalsets import sycophancy_probes
from tests.support.tiny_model import build_tiny_model

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("bench-refusals")
    return build_tiny_model(data_dir / "tiny", data_dir)


def bench(tiny_dir: Path, out: Path, seeds: int) -> dict[str, Any]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "bench.sycophancy_refusals", "--quick", "--model", str(tiny_dir)]
    done = subprocess.run(
        [*command, "--device", "cpu", "--seeds", str(seeds), "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


# Two runs of a process that loads torch, trains and scores 157 probes twice, on a shared machine.
@pytest.mark.timeout(600)
def test_each_seed_is_appended_and_a_second_run_resumes(tiny_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "refusals.jsonl"
    first = bench(tiny_dir, out, seeds=1)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["seed"] for row in rows] == [0]
    for row in rows:
        assert row["probes"] == len(sycophancy_probes()) == len(row["candidate_agrees"])
        assert row["candidate"] == row["candidate_agrees"].count("1") and row["b"] >= 0 and row["c"] >= 0
        assert 0.0 < row["p"] <= 1.0 and row["refused"] in (True, False)
    assert first["benchmark"] == "sycophancy_refusals" and first["seeds"] == 1
    assert first["refusals"] == sum(row["refused"] for row in rows) and first["target_met"] is None

    with out.open("a") as f:
        f.write('{"seed": 1, "settings": {"cut off by a kill')  # a line a killed run left half-written
    second = bench(tiny_dir, out, seeds=2)
    seeds = [json.loads(line)["seed"] for line in out.read_text().splitlines() if line.endswith("}")]
    assert seeds == [0, 1]  # seed 0 was not run again; 1 was, on a line of its own after the cut one
    assert second["seeds"] == 2 and len(second["extra_probes"]) == 2
    assert second["refusals"] == sum(json.loads(out.read_text().splitlines()[i])["refused"] for i in (0, 2))
