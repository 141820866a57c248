"""bench/soak.py on SQLite, short: the bot, a Celery worker and beat share one SQLite file on a
tmpfs the soak mounts, and `sqlite_disk_full` fills that tmpfs to the last byte for a few seconds
under simulated people. Nothing may be lost or duplicated: messages that came meanwhile are
answered once (with the notice that the memory store is unavailable) and stored once space is back,
and reactions on those answers count. As root the soak mounts its tmpfs here, and must have
unmounted it at the end; elsewhere it runs under `unshare -rm` (a user and mount namespace of its
own, as tests/cli/test_chat_cli.py mounts), whose mounts end with it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.support.full_disk import unmount
from tests.support.soak_run import run_soak

# About 50 s on 2 idle cores: 25 s of load, the people's last pauses, the drain. The drain waits up
# to 180 s for anything owed, so a run that lost something still reports before this.
TIMEOUT_S = 300


def test_a_full_sqlite_disk_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    root = os.geteuid() == 0
    try:
        run(tmp_path, [] if root else ["unshare", "-rm"])
    finally:
        disk = tmp_path / "disk"
        mounted = os.path.ismount(disk)
        if mounted:  # the soak left it behind: take it away before failing
            unmount(disk)
    assert not mounted, "the soak left its tmpfs mounted"


def run(tmp_path: Path, unshare: list[str]) -> None:
    command = [
        *unshare, sys.executable, "-m", "bench.soak", "--store", "sqlite", "--faults", "sqlite_disk_full",
        "--seconds", "25", "--people", "16", "--rate", "6", "--reminders", "0", "--disk-mb", "64",
        "--disk-full-s", "5", "--logs", str(tmp_path),
    ]  # fmt: skip
    done = run_soak(command, TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    [fault] = report["faults"]
    assert fault["fault"] == "sqlite_disk_full" and fault["recovered"], (fault, done.stderr[-3000:])
    # It bit: the canary's answer while the disk was full carried the store's notice, and its
    # words were stored once space was back.
    assert fault["told_while_full"] and fault["kept_words_stored_after_s"] is not None, fault
    checks = report["checks"]
    where = {"answers": checks["answers"]["by_kind"], "store": checks["store"], "webhook": checks["webhook"]}
    assert (report["lost"], report["duplicated"]) == (0, 0), (where, done.stderr[-3000:])
    assert report["chats_out_of_order"] == 0, checks["order"]
    assert checks["answers"]["replies_with_notice"] >= 1
    assert checks["answers"]["failure_notices"] == 0, checks["answers"]["failure_notice_samples"]
    assert checks["webhook"]["accepted"] == checks["webhook"]["updates"] > 50
    assert report["settings"]["store"].startswith("SQLite")
    assert report["processes_alive_at_end"] == {"worker": True, "beat": True, "bot0": True}
