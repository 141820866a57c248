"""The suite's own Redis: a private `redis-server` per test session, never the machine's.

`start_session_redis` runs once per test process (once per xdist worker) from tests/conftest.py
and publishes the server's address in TEST_REDIS_HOST, which `redis_url()` reads and the
processes the tests start inherit. Two suites on one machine each have their own server, so
flushing a database is flushing the session's own. `RedisServer` is also what the tests that stop
and start Redis use, each on a server of its own.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

# Not KINDRED_*: tests clear those from their environment to read settings afresh.
ENV_VAR = "TEST_REDIS_HOST"
# The database tests use unless they need one apart (TEST_REDIS_DB + 1, + 2, + 3): the server is
# the session's own, so the numbers only keep one test's keys and workers apart from another's.
TEST_REDIS_DB = 1
READY_TIMEOUT_S = 10


class NoSessionRedisError(RuntimeError):
    """redis_url() was called outside a test session that started its own server."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def redis_host() -> str:
    """host:port of the session's Redis."""
    host = os.environ.get(ENV_VAR)
    if not host:
        raise NoSessionRedisError(
            f"{ENV_VAR} is unset: the tests start their own redis-server (tests/conftest.py), "
            "and a script run alone starts one with start_session_redis()"
        )
    return host


def redis_url(db: int = TEST_REDIS_DB) -> str:
    return f"redis://{redis_host()}/{db}"


class RedisServer:
    """A private `redis-server` on one port, to stop and start again: Redis going away for real."""

    def __init__(self, folder: Path, *, persist: bool = False) -> None:
        self.port = free_port()
        # persist: an append-only file synced on every write: a killed server keeps what it acknowledged.
        self.persist = persist
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"redis://{self.host}/0"

    def start(self) -> RedisServer:
        durability = (
            ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        )
        command = [
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            *durability, "--dir", str(self.folder),
        ]  # fmt: skip
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.close()
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None


def start_session_redis() -> RedisServer:
    """Start this process's Redis and point TEST_REDIS_HOST at it; stopped at exit."""
    folder = Path(tempfile.mkdtemp(prefix="kindred-redis-"))
    server = RedisServer(folder)

    def stop() -> None:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)

    # A session that dies without its cleanup must not leave a server behind either.
    atexit.register(stop)
    server.start()
    os.environ[ENV_VAR] = server.host
    return server
