"""bench/parts/soak/resources.py against real processes and servers: a steady program (files, TCP
connections to itself, a child of its own) and a leaky one (memory, files and connections that grow),
a redis-server and a PostgreSQL database with clients the test holds; the soak's verdict
(bench/parts/soak/leaks.py) must name the leaky program and leave the steady one alone."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import redis

from bench.parts.soak import leaks
from bench.parts.soak.procs import System
from bench.parts.soak.resources import Root, Sampler, roots_of
from tests.jobs.workerproc import RedisServer
from tests.support.pg import pg_dsn, pg_server  # noqa: F401

OPENS = """
import socket, subprocess, sys, tempfile, time
listener = socket.create_server(("127.0.0.1", 0))
held = []
def connect():
    client = socket.create_connection(listener.getsockname())
    held.extend([client, listener.accept()[0], tempfile.TemporaryFile()])
"""
STEADY = (
    OPENS
    + """
for _ in range(2):
    connect()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print("ready", flush=True)
time.sleep(120)
"""
)
LEAKY = (
    OPENS
    + """
print("ready", flush=True)
for _ in range(100):
    held.append(b"x" * 2_000_000)
    connect()
    time.sleep(0.1)
time.sleep(120)
"""
)
SAMPLE_S = 6.0
EVERY_S = 0.2
WARM_UP_S = 1.0


@pytest.fixture
def programs() -> Iterator[dict[str, subprocess.Popen[str]]]:
    started = {
        name: subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for name, code in (("steady", STEADY), ("leaky", LEAKY))
    }
    try:
        for process in started.values():
            assert process.stdout is not None and process.stdout.readline() == "ready\n"
        yield started
    finally:
        for process in started.values():
            process.kill()  # the steady one's sleeping child is left to end on its own, in 120 s
            process.wait(timeout=10)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


async def test_the_leaky_program_is_named_and_the_steady_one_is_not(
    programs: dict[str, subprocess.Popen[str]],
    own_redis: RedisServer,
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    roots = [Root(name, process.pid) for name, process in programs.items()]
    redis_clients = [redis.Redis.from_url(own_redis.url) for _ in range(4)]
    sessions = [psycopg.connect(pg_dsn) for _ in range(3)]
    sampler = Sampler(lambda: roots, time.monotonic(), EVERY_S, pg_dsn, own_redis.url, tmp_path / "r.jsonl")
    try:
        for client in redis_clients:
            client.ping()
        sampling = asyncio.create_task(sampler.run())
        await asyncio.sleep(SAMPLE_S)
        sampling.cancel()
    finally:
        for client in redis_clients:
            client.close()
        for session in sessions:
            session.close()
    report = leaks.summary(list(sampler.samples), list(sampler.counts), WARM_UP_S, SAMPLE_S)

    assert set(report["processes"]) == {"steady", "steady-child", "leaky"}
    steady = report["processes"]["steady"]
    # Two connections to itself: both ends of each, established, and a file beside each.
    assert steady["tcp_established"]["first"] == steady["tcp_established"]["last"] == 4
    assert steady["tcp"]["last"] == 5  # and the listener
    assert steady["fds"]["first"] == steady["fds"]["last"] >= 9
    assert steady["judged"] == 1 and steady["rss_mb"]["worst_mb_per_hour"] <= leaks.RSS_TARGET_MB_PER_HOUR
    leaky = report["processes"]["leaky"]
    assert leaky["rss_mb"]["last"] - leaky["rss_mb"]["first"] > 50
    assert leaky["tcp_established"]["last"] >= 40 and leaky["fds"]["last"] >= 60
    misses = report["misses"]
    assert {m.split(":")[0] for m in misses} == {f"leaky (pid {programs['leaky'].pid})"}, misses
    assert [m.split(": ")[1].split()[0] for m in misses] == ["RSS", "fds", "tcp"], misses
    assert report["met"] == {"memory": False, "fds": False, "connections": False, "all": False}
    # The servers' own counts: the test's clients, never the sampler's.
    assert report["servers"]["redis_clients"]["first"] == report["servers"]["redis_clients"]["max"] == 4
    assert report["servers"]["postgres_connections"]["max"] == 3
    assert report["servers"]["postgres_connections"]["unanswered"] == 0
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(lines) == len(sampler.samples) + len(sampler.counts) > 3 * SAMPLE_S / EVERY_S
    assert {line["kind"] for line in lines} == {"process", "server"}


def test_the_system_is_sampled_part_by_part_with_redis_while_it_runs(tmp_path: Path) -> None:
    system = System(tmp_path, "postgresql://unused", "token", "http://unused", replicas=2)
    assert [p.name for p in system.processes()] == ["worker", "beat", "bot0", "bot1"]
    assert roots_of(system) == []
    system.beat.command = [sys.executable, "-c", "import time; time.sleep(60)"]
    system.beat.children_recycled = True
    system.redis.start()
    system.beat.start()
    try:
        roots = roots_of(system)
    finally:
        system.beat.kill()
        system.redis.stop()
    assert [(r.part, r.children_recycled) for r in roots] == [("redis", False), ("beat", True)]
    assert roots[0].pid != roots[1].pid
