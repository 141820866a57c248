"""bench/learning_sim.py on a tiny random model, in real subprocesses: the whole loop (days, the
nightly job, the canary day and its decision, the held-out measurement, the plot) runs end to end,
reports the JSON it promises, and gives the same JSON twice from one seed.

A random model cannot learn a taste in two steps; what this proves is that the pipeline runs, that
it decides every night and reports honestly, and that it repeats. The numbers come from the real
model (docs/benchmarks.md, "Learning")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench.test_training_bench import tiny_dir  # noqa: F401  (the module's tiny model)
from tests.conftest import share_onnx_export

ROOT = Path(__file__).resolve().parents[2]
# The simulation's own sizes, as small as still trains: a night needs 4 rated replies per label,
# and a canary decides nothing before 5 people in each arm.
TINY = (
    "--quick", "--people", "2", "--canary-people", "5", "--candidates", "4", "--eval-prompts", "4",
    "--train-steps", "2", "--heldout-share", "0.25",
)  # fmt: skip
DECISIONS = {"promoted", "harm", "expired", "refused", "none", "stopped"}


def start(tiny: Path, data_dir: Path, export: Path, *extra: str) -> subprocess.Popen[str]:
    share_onnx_export(export, data_dir)  # MiniLM exported once per test run, not once per simulation
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [
        sys.executable,
        "-m",
        "bench.learning_sim",
        *TINY,
        "--model",
        str(tiny),
        "--data-dir",
        str(data_dir),
    ]
    return subprocess.Popen(
        [*command, *extra], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(run: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = run.communicate(timeout=900)
    assert run.returncode == 0, err[-4000:]
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return report


def without_times(value: Any) -> Any:
    """The report less what differs between two runs of one seed by design: `date`, `machine`,
    and every field named `minutes` or ending in `_s` or `_ms`."""
    if isinstance(value, dict):
        return {
            key: without_times(item)
            for key, item in value.items()
            if key not in ("date", "machine", "minutes") and not key.endswith(("_s", "_ms"))
        }
    if isinstance(value, list):
        return [without_times(item) for item in value]
    return value


# Two simulations side by side: about 90 s on 2 idle cores, four times that on a loaded machine.
@pytest.mark.timeout(600)
def test_one_seed_gives_the_same_run_twice_and_a_random_teacher_promotes_nothing(
    tiny_dir: Path,  # noqa: F811
    onnx_export: Path,
    tmp_path: Path,
) -> None:
    plot = tmp_path / "curve.png"
    # Side by side, so that the two runs' timings differ as much as they can on this machine.
    runs = [
        start(tiny_dir, tmp_path / "first", onnx_export, "--teacher", "random", "--plot", str(plot)),
        start(tiny_dir, tmp_path / "second", onnx_export, "--teacher", "random"),
    ]
    first, second = (finish(run) for run in runs)
    for key in ("lift_points", "rates", "promoted", "noise", "teacher", "minutes", "seed", "learner"):
        assert key in first
    assert first["teacher"] == "random" and first["noise"] == 0.1 and first["learner"] == "both"
    assert len(first["rates"]) == len(first["promoted"]) == len(first["decisions"]) == 1
    [night] = first["nights"]
    assert night["status"] == "succeeded", night["message"]  # it trained and pre-screened
    assert set(night["adapter"]["checks"]) == {
        "heldout_margin",
        "regression_loss",
        "kl_to_base",
        "sycophancy",
    }
    [decision] = first["decisions"]
    assert decision["decision"] in DECISIONS and decision["reason"]
    if night["candidate"] is not None:  # its canary day ran and the test decided
        assert decision["decision"] in ("promoted", "harm", "expired") and decision["bound"]
        canary = first["days"][1]["arms"]["canary"]["replies"]
        assert first["canary_replies"] == canary == decision["bound"]["n_canary"] > 0
        assert first["days"][1]["replies"] == 5 * 4 * 4
    assert first["promoted"] == [False] and first["checks"]["nothing_promoted"]["passed"]
    assert first["days"][0]["replies"] == 2 * 4 * 4
    assert first["plan"]["heldout_share"] == 0.25 and first["canary"]["share"] == 0.5
    assert plot.stat().st_size > 1000
    assert without_times(first) == without_times(second)


@pytest.mark.timeout(600)
def test_a_reranking_sycophant_night_decides_and_reports_its_reward_model(
    tiny_dir: Path,  # noqa: F811
    onnx_export: Path,
    tmp_path: Path,
) -> None:
    """`--learner rerank` trains no adapter: only a reward model, served with best of n."""
    run = start(
        tiny_dir, tmp_path / "data", onnx_export, "--teacher", "sycophant", "--learner", "rerank",
        "--people", "8", "--react-to-misses", "0.6", "--best-of", "2",
    )  # fmt: skip
    report = finish(run)
    assert report["learner"] == "rerank" and report["best_of"] == 2 and report["claim_share"] == 0.3
    [night] = report["nights"]
    assert night["adapter"] is None  # no adapter trained
    assert night["reward_model"] is not None and night["reward_model"]["liked"] > 0
    assert report["days"][0]["claims"] > 0
    [decision] = report["decisions"]
    assert decision["decision"] in DECISIONS
    if decision["decision"] == "refused":
        assert "reward model r1" in decision["reason"]
    assert report["promoted"] == [decision["decision"] == "promoted"]
    assert "nothing_promoted" in report["checks"]
