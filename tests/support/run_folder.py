"""One folder for the whole test run, shared by its xdist workers, for what is made once per run.

The process that starts the run (the xdist controller, or the one process without xdist) makes it
in pytest_configure and removes it at the end; workers inherit TEST_RUN_DIR from it. `made_once`
lets the first process make a thing while the others wait for it, then hands each the same path.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

# Not KINDRED_*: tests clear those from their environment to read settings afresh.
ENV_VAR = "TEST_RUN_DIR"


def start_run_folder(config: pytest.Config) -> None:
    """Make the run's folder unless this process is a worker of a run that made one."""
    if hasattr(config, "workerinput") and os.environ.get(ENV_VAR):
        return
    folder = tempfile.mkdtemp(prefix="kindred-run-")
    os.environ[ENV_VAR] = folder
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


def run_folder() -> Path | None:
    found = os.environ.get(ENV_VAR)
    return Path(found) if found else None


def made_once(name: str, make: Callable[[Path], Path]) -> Path | None:
    """`make(run folder / name)`, called by one process of the run at a time; None outside a run.

    `make` must find and return what an earlier call made rather than make it again.
    """
    run = run_folder()
    if run is None:
        return None
    with (run / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return make(run / name)
