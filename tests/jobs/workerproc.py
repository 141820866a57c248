"""Real Celery worker subprocesses for the tests, on the session's own Redis (tests/support/redis_server.py).

Each worker is `celery -A tests.jobs.worker_app worker --pool solo`, its output in a log file the
tests can read. Whoever starts one stops it (SIGKILL, then wait) in a `finally`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

import redis

# Re-exported: the tests and bench/parts/soak/procs.py import the session's Redis from here.
from tests.support.redis_server import TEST_REDIS_DB, RedisServer, free_port, redis_url

__all__ = ["ROOT", "TEST_REDIS_DB", "RedisServer", "Worker", "flush", "free_port", "redis_url", "worker_env"]

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 60


def flush(url: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def worker_env(url: str, data_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL"))}
    env.update(
        {
            "REDIS_URL": url,
            "KINDRED_DATA_DIR": str(data_dir),
            "DATABASE_URL": f"sqlite:///{data_dir / 'worker.db'}",
            "PYTHONPATH": str(ROOT),
            "HF_HUB_OFFLINE": "1",
        }
    )
    env.update(extra or {})
    return env


class Worker:
    def __init__(
        self,
        url: str,
        data_dir: Path,
        *,
        queues: str = "default",
        app: str = "tests.jobs.worker_app",
        pool: str = "solo",
        concurrency: int = 1,
        loglevel: str = "INFO",
        **env: str,
    ) -> None:
        self.name = f"test-{uuid.uuid4().hex[:8]}@localhost"
        self.log_path = data_dir / f"{self.name}.log"
        data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "celery", "-A", app, "worker",
            "--pool", pool, "--concurrency", str(concurrency), "--queues", queues,
            "--hostname", self.name, "--loglevel", loglevel,
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            command, cwd=ROOT, env=worker_env(url, data_dir, env), stdout=self._log, stderr=subprocess.STDOUT
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self) -> Worker:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while " ready." not in self.log():
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited with {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"worker not ready in {READY_TIMEOUT_S} s:\n{self.log()}")
            time.sleep(0.1)
        return self

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self._log.close()
