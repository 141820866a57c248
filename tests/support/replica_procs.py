"""Bot replicas as real processes (tests/support/replica.py), and what each one costs: its resident
memory and the CPU time it used, read from /proc."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
WEBHOOK_PATH = "/telegram/webhook"


def replica_env(
    token: str, api_base: str, database_url: str, data_dir: Path, **settings: str
) -> dict[str, str]:
    """A replica's environment, as `kindred run` would read it: the webhook on the loopback Bot
    API, the shared state in Redis (KINDRED_SHARED_STATE_URL, unless `settings` say otherwise),
    Telegram's flood limit out of the way; none of this machine's own Kindred settings."""
    from tests.jobs.workerproc import redis_url

    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "TELEGRAM_", "DATABASE_"))}
    env.update(
        TELEGRAM_BOT_TOKEN=token,
        TELEGRAM_API_BASE_URL=api_base,
        TELEGRAM_WEBHOOK_URL=f"https://bot.example.org{WEBHOOK_PATH}",
        KINDRED_SHARED_STATE_URL=redis_url(),
        DATABASE_URL=database_url,
        KINDRED_DATA_DIR=str(data_dir),
        KINDRED_WEB_PORT="0",
        KINDRED_TELEGRAM_SENDS_PER_SECOND="100000",
    )
    env.update(settings)
    return env


class ReplicaProcess:
    def __init__(self, process: asyncio.subprocess.Process, port: int, log: Path) -> None:
        self.process, self.port, self.log = process, port, log
        self._told_to_stop = False

    @classmethod
    async def start(cls, env: Mapping[str, str], log: Path, *, ready_s: float = 60.0) -> ReplicaProcess:
        with log.open("ab") as stderr:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tests.support.replica",
                cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)},
                stdout=asyncio.subprocess.PIPE, stderr=stderr,
            )  # fmt: skip
        assert process.stdout is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), ready_s)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        if not line:
            await process.wait()
            raise AssertionError(f"replica exited {process.returncode}; its log: {log}")
        return cls(process, int(json.loads(line)["port"]), log)

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        return kb / 1024

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime

    def kill(self) -> None:
        self.process.kill()

    def terminate(self) -> None:
        """SIGTERM, once: a second one could reach the process after it let go of its handler."""
        if self.process.returncode is None and not self._told_to_stop:
            self._told_to_stop = True
            self.process.terminate()

    async def stop(self, timeout_s: float = 30.0) -> int:
        """SIGTERM, and the exit code once it has finished what it accepted."""
        self.terminate()
        return await asyncio.wait_for(self.process.wait(), timeout_s)
