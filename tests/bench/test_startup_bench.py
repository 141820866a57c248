"""Smoke test of bench/startup.py: the tiny model, one run of each kind, the JSON it promises.
It checks the report's shape and its arithmetic, not the speed (see docs/benchmarks.md for the numbers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import share_onnx_export
from tests.support.tiny_model import build_tiny_model

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 600  # a warm-up and two starts of a process that imports torch, on a busy CI box
PARTS = [
    "python", "kindred_imports", "torch_import", "store_open", "model_load",
    "embedder_load", "first_byte", "last_byte",
]  # fmt: skip


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, onnx_export: Path) -> Path:
    data = tmp_path_factory.mktemp("bench-startup")
    share_onnx_export(onnx_export, data)
    build_tiny_model(data / "tiny", data)
    return data


def test_startup_bench_quick_run_reports_the_parts_and_the_check(data_dir: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "bench.startup", "--quick", "--model", str(data_dir / "tiny")]
    done = subprocess.run(
        [*command, "--data-dir", str(data_dir)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)  # stdout holds the JSON and nothing else
    assert report["benchmark"] == "startup" and report["settings"]["runs"] == 1
    chat = report["chat"]
    assert 0 < chat["first_byte_s"] <= chat["last_byte_s"] <= chat["exit_s"]
    assert 0 < chat["cpu_at_first_byte_s"] <= chat["cpu_s"]
    assert chat["runs"][0]["reply_chars"] > 0
    # The chat's own log says when each part was ready, and it was ready before the reply.
    ready = chat["runs"][0]["ready_after_build_start_s"]
    assert set(ready) == {"store_open", "embedder_loaded", "model_loaded"}
    assert max(ready.values()) < chat["first_byte_s"]
    parts = report["parts"]
    assert [part["part"] for part in parts] == PARTS
    for part in parts:
        assert part["wall_s"] >= 0 and part["cpu_s"] >= 0
    ends = [part["at_s"] for part in parts]
    assert ends == sorted(ends) and abs(sum(part["wall_s"] for part in parts) - ends[-1]) < 0.01
    check = report["checks"]["first_byte_s"]
    assert check["target"] == 4.0 and check["value"] == chat["first_byte_s"]
    assert check["pass"] is (check["value"] <= 4.0) and report["pass"] is check["pass"]
