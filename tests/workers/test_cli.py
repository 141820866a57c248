"""`kindred worker`, `kindred beat`, `kindred flower`: their checks, and Flower behind basic auth."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.cli.workers import worker_command
from bot.wiring.settings import Settings
from tests.jobs.workerproc import ROOT, free_port, redis_url


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in list(os.environ):
        if name.startswith(("KINDRED_", "REDIS_URL", "DATABASE_URL")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))
    return monkeypatch


@pytest.mark.parametrize("command", ["worker", "beat", "flower"])
def test_each_needs_redis(env: pytest.MonkeyPatch, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command]) == 2
    assert "needs REDIS_URL" in capsys.readouterr().err


def test_flower_refuses_to_run_without_basic_auth_outside_development(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env.setenv("REDIS_URL", redis_url())
    env.setenv("KINDRED_FLOWER_USER", "admin")  # a user without a password is not enough
    assert main(["flower"]) == 2
    assert "KINDRED_FLOWER_PASSWORD" in capsys.readouterr().err


def test_the_gpu_worker_is_one_process_with_a_thread_per_batched_reply_and_cpu_workers_prefork() -> None:
    settings = Settings()
    gpu = worker_command(settings, argparse.Namespace(queues="gpu", pool=None, concurrency=None, name=None))
    cpu = worker_command(
        settings, argparse.Namespace(queues="default, build", pool=None, concurrency=3, name="cpu")
    )
    assert gpu[gpu.index("--pool") + 1] == "threads" and "gpu@%h" in gpu
    assert gpu[gpu.index("--concurrency") + 1] == str(settings.inference.batch_size)
    assert cpu[cpu.index("--pool") + 1] == "prefork" and cpu[cpu.index("--queues") + 1] == "default,build"
    assert gpu[gpu.index("--hostname") + 1] == "gpu@%h" and cpu[cpu.index("--hostname") + 1] == "cpu@%h"
    assert cpu[cpu.index("--concurrency") + 1] == "3"
    assert gpu[1:5] == ["-m", "celery", "-A", "workers.app"]
    # Gossip kept one more socket to Redis in CLOSE_WAIT after every Redis restart (docs/reliability.md).
    assert all({"--without-gossip", "--without-mingle"} <= set(command) for command in (gpu, cpu))


def status(url: str, auth: str | None = None) -> int:
    request = urllib.request.Request(url)
    if auth is not None:
        import base64

        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.procs
def test_flower_runs_behind_basic_auth(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KINDRED_")}
    env.update(
        REDIS_URL=redis_url(),
        KINDRED_FLOWER_USER="admin",
        KINDRED_FLOWER_PASSWORD="flower-pw",
        KINDRED_DATA_DIR=str(tmp_path),
        PYTHONPATH=str(ROOT),
    )
    log = (tmp_path / "flower.log").open("w")
    flower = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "flower", "--port", str(port)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                first = status(f"{base}/")
                break
            except OSError:
                assert flower.poll() is None, (tmp_path / "flower.log").read_text()
                assert time.monotonic() < deadline, "flower did not start"
                time.sleep(0.2)
        assert first == 401
        assert status(f"{base}/", "admin:wrong") == 401
        assert status(f"{base}/", "admin:flower-pw") == 200
        assert status(f"{base}/healthcheck") == 200  # what the compose healthcheck asks
        assert "flower-pw" not in " ".join(flower.args)  # not on a command line `ps` shows
    finally:
        flower.kill()
        flower.wait()
        log.close()
