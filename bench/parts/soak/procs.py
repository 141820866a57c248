"""The processes of bench/soak.py: Redis, a Celery worker and beat, the bot (one or more replicas),
each its own process group, so that a fault can kill exactly it and the soak can start it again.

Settings reach every process through the environment only, as in a deployment.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.parts.common import log
from bot.cli.workers import QUIET
from tests.jobs.workerproc import ROOT, RedisServer, free_port

READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 60.0
WEBHOOK_URL = "https://soak.kindred.invalid/telegram/webhook"
APPS_URL = "https://apps.soak.kindred.invalid"


@dataclass
class Process:
    """One program in a process group of its own, its output in `log_path`."""

    name: str
    command: list[str]
    env: dict[str, str]
    log_path: Path
    ready_text: str
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    # Its children live one task each (Celery's max_tasks_per_child=1): their memory is reported
    # apart and not judged by bench/parts/soak/leaks.py.
    children_recycled: bool = False

    def start(self) -> Process:
        self.starts += 1
        with self.log_path.open("ab") as out:
            out.write(f"\n--- start {self.starts} ---\n".encode())
            out.flush()
            self.proc = subprocess.Popen(
                self.command, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        return self

    def output(self) -> str:
        text = self.log_path.read_text(errors="replace")
        return text[text.rfind("--- start ") :]

    def wait_ready(self) -> float:
        """Seconds until this start printed its ready line."""
        began = time.monotonic()
        while self.ready_text not in self.output():
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited:\n{self.output()[-3000:]}")
            if time.monotonic() - began > READY_TIMEOUT_S:
                raise RuntimeError(f"{self.name} not ready in {READY_TIMEOUT_S} s:\n{self.output()[-3000:]}")
            time.sleep(0.1)
        return time.monotonic() - began

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def kill(self) -> None:
        """SIGKILL to the whole group (a prefork worker's children too), as a crash would."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=STOP_TIMEOUT_S)

    def terminate(self) -> int:
        """SIGTERM and wait: a graceful stop. Returns the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            return -9


def base_env(data: Path, database_url: str, redis_url: str, token: str, api_base: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL", "TELEGRAM_"))}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "HF_HUB_OFFLINE": "1",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "TELEGRAM_BOT_TOKEN": token,
            "TELEGRAM_API_BASE_URL": api_base,
            "KINDRED_DATA_DIR": str(data),
            "KINDRED_LOG_LEVEL": "WARNING",
            # A reminder "in 1 minute" rings within the soak.
            "KINDRED_PROACTIVE_CRON": "* * * * *",
            # App builds by rules only: no model pass (the fixture is no model).
            "KINDRED_APP_MODEL_PASS": "false",
            "KINDRED_APP_FREE_FORM": "off",
            "KINDRED_APPS_URL": APPS_URL,
            # Simulated people write faster than the per-person limit allows real ones to.
            "KINDRED_USER_MESSAGES_PER_MINUTE": "0",
            # A killed worker's job is handed to the next after this long (acks late). The default
            # outlasts nightly training (an hour); the soak runs no job longer than seconds, and an
            # app build waits at most 180 s for its result.
            "KINDRED_VISIBILITY_TIMEOUT_S": "60",
            # The loopback Bot API has no flood limit; Telegram's 30/s would be the cap.
            "KINDRED_TELEGRAM_SENDS_PER_SECOND": "1000",
        }
    )
    return env


@dataclass
class System:
    """Everything bench/soak.py runs apart from PostgreSQL and the fake Bot API; with `training`,
    a `train` worker too, which shares the machine as a deployment on one box would (see
    `trainer_process`)."""

    folder: Path
    database_url: str
    token: str
    api_base: str
    replicas: int = 1
    training: bool = False
    redis: RedisServer = field(init=False)
    worker: Process = field(init=False)
    beat: Process = field(init=False)
    bots: list[Process] = field(init=False)
    trainer: Process | None = field(init=False, default=None)
    # Parts a fault is stopping and starting itself, which the supervisor leaves alone meanwhile.
    held: set[str] = field(default_factory=set)
    # Restarts by the supervisor (as docker compose's `restart: unless-stopped` does), by part.
    crashes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Persistence (appendonly, fsync always): a killed Redis keeps every queued task it acknowledged.
        self.redis = RedisServer(self.folder / "redis", persist=True)
        env = base_env(self.folder / "data", self.database_url, self.redis.url, self.token, self.api_base)
        python = sys.executable
        # What `kindred worker --queues build,default` runs (bot/cli/workers.py), with the fixtures' app.
        self.worker = Process(
            "worker",
            [python, "-m", "celery", "-A", "bench.parts.soak.worker", "worker", "--queues", "build,default",
             "--pool", "prefork", *QUIET, "--concurrency", "2", "--hostname", "soak@%h",
             "--loglevel", "INFO"],
            env, self.folder / "worker.log", " ready.",
        )  # fmt: skip
        self.beat = Process(
            "beat", [python, "-m", "bot.cli", "beat"], {**env, "KINDRED_LOG_LEVEL": "INFO"},
            self.folder / "beat.log", "beat: Starting",
        )  # fmt: skip
        if self.training:
            self.trainer = trainer_process(env, self.folder / "trainer.log")
        self.bots = []
        for n in range(self.replicas):
            port = free_port()
            bot_env = {
                **env,
                "TELEGRAM_WEBHOOK_URL": WEBHOOK_URL,
                "KINDRED_WEB_HOST": "127.0.0.1",
                "KINDRED_WEB_PORT": str(port),
                "KINDRED_DATA_DIR": str(self.folder / f"bot{n}"),
            }
            self.bots.append(
                Process(f"bot{n}", [python, "-m", "bench.parts.soak.bot"], bot_env,
                        self.folder / f"bot{n}.log", "kindred: serving")
            )  # fmt: skip

    def bot_ports(self) -> list[int]:
        return [int(bot.env["KINDRED_WEB_PORT"]) for bot in self.bots]

    def processes(self) -> list[Process]:
        """Every part but Redis, each its own process group."""
        trainer = [self.trainer] if self.trainer is not None else []
        return [self.worker, self.beat, *trainer, *self.bots]

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.redis.start()
        for process in self.processes():
            process.start()
        for process in self.processes():
            log(f"{process.name} ready in {process.wait_ready():.1f} s")

    def restart_crashed(self) -> None:
        """What the deployment's supervisor does: a part that exited on its own is started again."""
        for process in self.processes():
            if process.name in self.held or process.proc is None or process.proc.poll() is None:
                continue
            log(f"supervisor: {process.name} exited ({process.proc.returncode}); starting it again")
            self.crashes[process.name] = self.crashes.get(process.name, 0) + 1
            process.start()
            process.wait_ready()

    def stop(self) -> None:
        self.held.update(p.name for p in self.processes())
        for bot in self.bots:
            if bot.proc is not None:
                bot.terminate()
        for process in self.processes():
            if process not in self.bots:
                process.kill()
        self.redis.stop()


# A night on the soak's machine: small enough to finish twice within the long run (it is killed
# once), on the bundled model, beside the bot as a one-box deployment runs it.
TRAIN_STEPS = 8


def trainer_process(env: dict[str, str], log_path: Path) -> Process:
    """`nice -n 19 kindred worker --queues train` with one torch thread: a night shares the two
    cores with the bot and must not slow it down. One task per child (`--max-tasks-per-child 1`), so
    that a night's memory goes back to the system when it ends; the soak's kill of that child is
    what the kernel's OOM killer does to a night that outgrew the machine."""
    trainer_env = {
        **env,
        "KINDRED_TRAIN_THREADS": "1",
        "KINDRED_TRAIN_MAX_STEPS": str(TRAIN_STEPS),
        "KINDRED_TRAIN_BATCH_SIZE": "4",
        "KINDRED_TRAIN_MAX_LENGTH": "128",
        "KINDRED_TRAIN_DEVICE": "cpu",
        "TQDM_DISABLE": "1",
    }
    command = [
        "nice", "-n", "19", sys.executable, "-m", "celery", "-A", "bench.parts.soak.worker", "worker",
        "--queues", "train", "--pool", "prefork", *QUIET, "--concurrency", "1", "--max-tasks-per-child", "1",
        "--hostname", "trainer@%h", "--loglevel", "INFO",
    ]  # fmt: skip
    return Process("trainer", command, trainer_env, log_path, " ready.", children_recycled=True)
