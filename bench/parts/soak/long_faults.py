"""The soak's faults beyond bench/parts/soak/faults.py, each followed by its canary as there; the
first only in the long soak (`bench/soak.py --long`), which runs a train worker:

- `training_oom`: a night's training job is sent (as beat sends it) to the `train` worker, and
  once it has logged a step, its process is SIGKILLed, as the kernel's OOM killer kills the
  biggest process of a machine out of memory (the killer itself cannot be made to pick it here
  without starving the soak: this machine has 24 GiB and no memory cgroup of its own). The job
  comes back (acks late, its death counted) and must finish; meanwhile people chat on. Its
  window is where latency is reported apart.
- `redis_failover`: the soak's own redis-server is killed and started again with an empty
  dataset, as when a replica with nothing on it takes over: queued jobs, results, the webhook
  intake's dedupe and order, the token buckets are gone.
- `clock_skew`: the last bot replica is restarted with its wall clock 90 s ahead (libfaketime;
  monotonic clocks untouched, as real skew leaves them); it stays so until the end: skew between
  replicas, and between a replica and the workers, beat and the database.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from bench.parts.soak.faults import Faults, _chat
from bench.parts.soak.people import build
from bench.parts.soak.procs import Process
from bench.parts.soak.store import open_at
from bot.core.errors import StoreError
from bot.core.learning.nightly import NIGHTLY_JOB
from bot.jobs.celery_runner import CeleryJobs
from bot.wiring.jobs import job_registry
from bot.wiring.settings import Settings

# This module's faults that every soak runs (CI's short one too), and the one only --long runs.
MORE_FAULTS = {"redis_failover": 0.6, "clock_skew": 0.72}
LONG_ONLY = {"training_oom": 0.2}
LONG_FAULTS = {**MORE_FAULTS, **LONG_ONLY}
# Faults that run beside the others instead of in turn: a night takes minutes.
BESIDE = {"training_oom"}
SKEW = "+90s"
FAKETIME_LIBS = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
)
NIGHT_WAIT_S = 3600.0
POLL_S = 2.0


class LongFaults:
    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.system = faults.system

    async def training_oom(self) -> dict[str, Any]:
        """Judged by the runs the store records (a Redis fault meanwhile may take Celery's result)."""
        trainer = self.system.trainer
        if trainer is None:
            raise RuntimeError("training_oom needs the train worker (bench/soak.py --long)")
        jobs = CeleryJobs.connect(self.system.redis.url, job_registry(Settings()))
        try:
            jobs.submit(NIGHTLY_JOB, {})
        finally:
            await jobs.close()
        began = time.monotonic()
        killed_run = await self._run_mid_way()
        stepped_s = time.monotonic() - began
        killed = kill_biggest_child(trainer)
        runs = await self._until(lambda runs: runs[0]["id"] > killed_run and runs[0]["status"] != "running")
        dead = next(r for r in runs if r["id"] == killed_run)
        return {
            "detail": f"a night sent; at its first logged step ({stepped_s:.0f} s in) SIGKILL to the train "
            f"worker's child (pid {killed['pid']}, {killed['rss_mb']:.0f} MB, the biggest: the OOM "
            f"killer's choice); the night came back and ended {runs[0]['status']!r} "
            f"{time.monotonic() - began:.0f} s after it was sent",
            "runs": runs,
            # The night came back and ended, and the run its death cut short is recorded failed.
            "canary_answered": runs[0]["status"] in ("succeeded", "skipped") and dead["status"] == "failed",
            "window": "training",
        }

    async def _run_mid_way(self) -> int:
        """The id of the night's run once it has logged a training step (a loss)."""
        runs = await self._until(lambda runs: runs[0]["losses"] > 0 or runs[0]["status"] != "running")
        if runs[0]["status"] != "running":
            raise RuntimeError(f"the night ended before its first step: {runs[0]}")
        return int(runs[0]["id"])

    async def _until(self, done: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
        deadline = time.monotonic() + NIGHT_WAIT_S
        while time.monotonic() < deadline:
            try:
                runs = await self._runs()
            except StoreError:  # a fault on the store meanwhile: look again
                runs = []
            if runs and done(runs):
                return runs
            await asyncio.sleep(POLL_S)
        raise TimeoutError("the night did not get there within the hour")

    async def _runs(self) -> list[dict[str, Any]]:
        store = await open_at(self.faults.dsn)  # PostgreSQL's, or the SQLite file (--store)
        try:
            return [
                {
                    "id": r.id,
                    "status": r.status,
                    "message": r.message[:160],
                    "losses": sum(1 for step in r.steps if "loss" in step),
                }
                for r in await store.adapters.list_runs(5)
            ]
        finally:
            await store.close()

    async def redis_failover(self) -> dict[str, Any]:
        redis = self.system.redis
        await asyncio.to_thread(redis.stop)
        emptied = empty_folder(redis.folder)
        await asyncio.to_thread(redis.start)
        result = await self.faults.answered(build)
        chat = await self.faults.answered(_chat)
        return {
            "detail": f"SIGKILL to redis-server, its {emptied} files deleted, started empty on its port",
            **result,
            "canary_answered": result["canary_answered"] and chat["canary_answered"],
        }

    async def clock_skew(self) -> dict[str, Any]:
        bot = self.system.bots[-1]
        library = faketime_library()
        self.system.held.add(bot.name)
        try:
            await asyncio.to_thread(bot.terminate)
            bot.env.update(skewed(library))
            bot.start()
            await asyncio.to_thread(bot.wait_ready)
        finally:
            self.system.held.discard(bot.name)
        return {
            "detail": f"{bot.name} restarted with its wall clock {SKEW} (libfaketime), until the end",
            **await self.faults.answered(_chat),
        }


def faketime_library() -> str:
    library = next((path for path in FAKETIME_LIBS if Path(path).exists()), None)
    if library is None:
        raise RuntimeError("clock_skew needs libfaketime: apt install faketime")
    return library


def skewed(library: str) -> dict[str, str]:
    return {"LD_PRELOAD": library, "FAKETIME": SKEW, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


def kill_biggest_child(process: Process) -> dict[str, Any]:
    """SIGKILL to the biggest process under `process` (by resident memory)."""
    if process.pid is None:
        raise RuntimeError(f"{process.name} is not running")
    children = psutil.Process(process.pid).children(recursive=True)
    if not children:
        raise RuntimeError(f"{process.name} has no child to kill")
    biggest = max(children, key=lambda child: child.memory_info().rss)
    rss_mb = biggest.memory_info().rss / 2**20
    os.kill(biggest.pid, signal.SIGKILL)
    return {"pid": biggest.pid, "rss_mb": rss_mb}


def empty_folder(folder: Path) -> int:
    count = 0
    for path in folder.iterdir():
        if path.is_dir():
            count += sum(1 for p in path.rglob("*") if p.is_file())
            shutil.rmtree(path)
        else:
            count += 1
            path.unlink()
    return count
