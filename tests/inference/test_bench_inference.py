"""Smoke test of bench/inference.py: the tiny model, --quick, a real subprocess, the JSON it promises.
It checks shape, not speed: the numbers come from full runs (docs/benchmarks.md, "Inference")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LATENCY_KEYS = {"p50_ms", "p95_ms", "max_ms", "n"}


def test_inference_bench_reports_throughput_and_first_token(tiny_dir: Path, data_dir: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "bench.inference", "--quick", "--model", str(tiny_dir),
         "--data-dir", str(data_dir), "--concurrency", "1,8,32", "--threads", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)  # stdout holds the JSON and nothing else
    assert {"date", "machine", "settings", "results", "checks"} <= report.keys()
    assert report["settings"]["max_batch"] == 32
    for level in ("1", "8", "32"):
        result = report["results"][level]
        assert result["requests"] == int(level)
        assert result["tokens"] > 0 and result["tokens_per_s"] > 0
        assert set(result["time_to_first_token"]) == LATENCY_KEYS
        assert result["time_to_first_token"]["n"] == int(level)
    assert isinstance(report["checks"]["target_at_8"]["pass"], bool)
    assert report["checks"]["speedup_at_32"] > 0
    versus = report["engine_vs_generate"]
    assert versus["pairs"] == 2 and versus["max_tokens"] == 12
    assert versus["generate_tokens_per_s"] > 0 and versus["engine_tokens_per_s"] > 0
    ratio = versus["engine_tokens_per_s"] / versus["generate_tokens_per_s"]
    assert abs(versus["engine_vs_generate"] - ratio) < 0.01
    # Greedy on both sides with the same penalty: the engine must write what generate writes.
    assert versus["same_text"] == "2/2"
    check = report["checks"]["engine_vs_generate"]
    assert check["target"] == 0.9 and check["pass"] == (check["value"] >= 0.9)


def test_best_of_n_bench_reports_first_byte_whole_and_the_target(tiny_dir: Path, data_dir: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "bench.inference", "--best-of-n", "--quick", "--model", str(tiny_dir),
         "--data-dir", str(data_dir), "--n", "1,2,4", "--prompts", "2", "--max-tokens", "8",
         "--threads", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    assert report["benchmark"] == "best_of_n" and report["settings"]["n"] == [1, 2, 4]
    assert report["settings"]["max_batch"] == 4 and report["settings"]["engine"] == "llama"
    for n in ("1", "2", "4"):
        result = report["results"][n]
        for key in ("first_byte", "whole", "cpu"):
            assert set(result[key]) == LATENCY_KEYS and result[key]["n"] == 2
        # Sampled text of random weights may hold broken characters that re-tokenize to more tokens.
        assert result["tokens_p50"] > 0
    one, four = report["results"]["1"], report["results"]["4"]
    assert one["first_byte"]["p50_ms"] <= one["whole"]["p50_ms"]
    assert four["first_byte"] == four["whole"], "best of n sends nothing before every candidate is done"
    target = report["checks"]["target_at_4"]
    assert target["target"] == 1.5 and target["pass"] == (target["value"] <= 1.5)
    assert target["value"] == report["checks"]["whole_ratio_at_4"]
