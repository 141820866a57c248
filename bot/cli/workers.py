"""`kindred worker`, `kindred beat`, `kindred flower`: Celery's own commands, run with Kindred's
settings and checks. They start `celery -A workers.app …` as a program (bot/ never imports
workers/), so a worker's settings are read in the worker process itself."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import Any

from bot.core.errors import SharedStateUnavailable
from bot.wiring.platforms import beat_lock
from bot.wiring.settings import Settings

CELERY = [sys.executable, "-m", "celery", "-A", "workers.app"]
# Gossip (workers telling each other of themselves) left a socket to Redis open, in CLOSE_WAIT,
# after every restart of Redis (kombu reconnects it and never closes the old one: +1 fd each time,
# found by bench/soak.py --long; tests/workers/test_worker_sockets.py). Kindred needs neither it
# nor mingle (workers syncing revoked tasks at start): it revokes no task, and no worker asks
# another; `inspect`, healthchecks' `ping` and Flower's events are remote control, still on.
QUIET = ["--without-gossip", "--without-mingle"]
NO_REDIS = "kindred: {command} needs REDIS_URL (redis://HOST:6379/0); without it jobs run in-process"
NO_FLOWER_AUTH = (
    "kindred: flower needs KINDRED_FLOWER_USER and KINDRED_FLOWER_PASSWORD (basic auth), "
    "unless KINDRED_ENV=development"
)
BEAT_HELD = (
    "kindred: another beat is running ({holder}); run exactly one. "
    "Its lock expires within {ttl} s after it stops."
)
LOST_LOCK = "kindred: beat lost its lock to another beat; stopping"
UNREACHABLE_LOCK = "kindred: beat cannot renew its lock (Redis unreachable); stopping until it is back"
# How long celery beat has to stop on SIGTERM before it is killed.
BEAT_STOP_S = 10.0


def add_commands(commands: Any) -> None:
    """Register the subcommands on `kindred`'s subparsers."""
    worker = commands.add_parser("worker", help="run a Celery worker (needs REDIS_URL)")
    worker.add_argument(
        "--queues", default="build,default,train", help="comma-separated: gpu, train, build, default"
    )
    worker.add_argument(
        "--name", help="the node's name before @host (default: the first queue); healthchecks ping it"
    )
    worker.add_argument(
        "--pool", help="Celery pool; default threads with gpu (one process per GPU), else prefork"
    )
    worker.add_argument(
        "--concurrency", type=int, help="threads (gpu: default the batch size) or processes (prefork)"
    )
    commands.add_parser("beat", help="run the one Celery beat (needs REDIS_URL)")
    requeue = commands.add_parser(
        "requeue", help="run a failed job again under its id (one given up after its worker died)"
    )
    requeue.add_argument("job_id", help="the job's id, as Flower and the worker's log show it")
    flower = commands.add_parser("flower", help="run Flower, Celery's dashboard, with basic auth")
    flower.add_argument("--port", type=int, help="default KINDRED_FLOWER_PORT (5555)")


def worker_command(settings: Settings, args: argparse.Namespace) -> list[str]:
    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    gpu = "gpu" in queues
    # The GPU worker is one process (CUDA is never forked; the model is loaded once) with a thread
    # per reply in flight, so that replies arriving together run as one batch on the device.
    pool = args.pool or ("threads" if gpu else "prefork")
    concurrency = args.concurrency or (settings.inference.batch_size if gpu else None)
    command = [*CELERY, "worker", "--queues", ",".join(queues), "--pool", pool, *QUIET]
    # A fixed name (--name) lets a healthcheck find the node whatever order its queues are listed in.
    name = args.name or queues[0]
    command += ["--hostname", f"{name}@%h", "--loglevel", settings.general.log_level]
    if concurrency:
        command += ["--concurrency", str(concurrency)]
    return command


def flower_auth(settings: Settings) -> str | None:
    """user:password for Flower, or None when it may run open (development only)."""
    workers = settings.workers
    if workers.flower_user and workers.flower_password:
        return f"{workers.flower_user}:{workers.flower_password.get_secret_value()}"
    return None


async def run_worker(settings: Settings, args: argparse.Namespace) -> int:
    if not settings.workers.redis_url:
        print(NO_REDIS.format(command="worker"), file=sys.stderr)
        return 2
    command = worker_command(settings, args)
    os.execv(command[0], command)


async def run_flower(settings: Settings, args: argparse.Namespace) -> int:
    if not settings.workers.redis_url:
        print(NO_REDIS.format(command="flower"), file=sys.stderr)
        return 2
    auth = flower_auth(settings)
    if auth is None and settings.general.env != "development":
        print(NO_FLOWER_AUTH, file=sys.stderr)
        return 2
    env = dict(os.environ)
    if auth is not None:
        env["FLOWER_BASIC_AUTH"] = auth  # in the environment, not on a command line `ps` shows
    port = args.port or settings.workers.flower_port
    command = [*CELERY, "flower", f"--port={port}"]
    os.execve(command[0], command, env)


async def run_beat(settings: Settings, args: argparse.Namespace) -> int:
    if not settings.workers.redis_url:
        print(NO_REDIS.format(command="beat"), file=sys.stderr)
        return 2
    with beat_lock(settings.workers) as lock:
        if not lock.acquire():
            print(BEAT_HELD.format(holder=lock.holder(), ttl=lock.ttl_s), file=sys.stderr)
            return 1
        return await _beat_while_locked(settings, lock)


async def _beat_while_locked(settings: Settings, lock: Any) -> int:
    """Celery beat as a child, for as long as this process holds the lock. Whatever ends this
    process (the lock lost or unreachable, a signal, an error), the child goes with it: a beat
    left behind would send every entry twice once another beat starts."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    schedule = settings.data_dir / "celerybeat-schedule"
    child = await asyncio.create_subprocess_exec(
        *CELERY, "beat", "--schedule", str(schedule), "--loglevel", settings.general.log_level
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, _forward, child, signal.SIGTERM)
    renew_every = lock.ttl_s / 3
    try:
        while True:
            try:
                return await asyncio.wait_for(child.wait(), renew_every)
            except TimeoutError:
                held = await asyncio.to_thread(_renewed, lock)
                if held is not True:
                    print(LOST_LOCK if held is False else UNREACHABLE_LOCK, file=sys.stderr)
                    _forward(child, signal.SIGTERM)
                    code = await _stopped(child)
                    return code if held is False else 1
    finally:
        await _stopped(child)


def _renewed(lock: Any) -> bool | None:
    """True: still ours; False: another beat's; None: Redis cannot say (unreachable)."""
    try:
        return bool(lock.renew())
    except SharedStateUnavailable:
        return None


async def _stopped(child: asyncio.subprocess.Process) -> int:
    """The child's exit code, once it has exited: SIGTERM, then SIGKILL after a grace."""
    _forward(child, signal.SIGTERM)
    try:
        return await asyncio.wait_for(child.wait(), BEAT_STOP_S)
    except TimeoutError:
        _forward(child, signal.SIGKILL)
        return await child.wait()


def _forward(child: asyncio.subprocess.Process, sig: int) -> None:
    if child.returncode is None:
        child.send_signal(sig)


async def requeue(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.jobs import requeue_job

    name = await requeue_job(settings, args.job_id)
    print(f"kindred: {name} ({args.job_id}) queued again")
    return 0


HANDLERS = {"worker": run_worker, "beat": run_beat, "flower": run_flower, "requeue": requeue}
