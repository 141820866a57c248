"""bench/soak.py in a child process for a test, stopped with SIGTERM past its time: the soak then
stops every process it started (and unmounts its tmpfs). subprocess.run's SIGKILL left the soak's
workers, bots, redis-server and PostgreSQL running, into the next test run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from subprocess import PIPE

ROOT = Path(__file__).resolve().parents[2]
STOP_S = 90


def run_soak(command: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with subprocess.Popen(command, cwd=ROOT, env=env, stdout=PIPE, stderr=PIPE, text=True) as soak:
        try:
            stdout, stderr = soak.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            soak.terminate()
            stdout, stderr = soak.communicate(timeout=STOP_S)
            raise AssertionError(f"the soak ran past {timeout_s:g} s:\n{stderr[-4000:]}") from None
    return subprocess.CompletedProcess(command, soak.returncode, stdout, stderr)
