"""What the processes of bench/soak.py hold over time, sampled every few seconds: for each part's main
process and each of its descendants, its memory (RSS), open file descriptors, TCP connections and
threads (with psutil); and the servers' side of the connections: the sessions PostgreSQL has open on
the soak's database and the clients of the soak's own redis-server.

bench/parts/soak/leaks.py summarises the samples and judges them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil
import psycopg
import redis

from bench.parts.soak.procs import System

MB = 1024 * 1024
CONNECT_TIMEOUT_S = 2
# The sampler's own PostgreSQL session, left out of the count by this name too: one that is still
# closing after the previous sample is no connection of the system's.
SAMPLER_NAME = "kindred-soak-sampler"
CHILD = "-child"


@dataclass(frozen=True)
class Root:
    """A part's main process. Its descendants are found at each sample."""

    part: str
    pid: int
    children_recycled: bool = False


@dataclass(frozen=True)
class Sample:
    """One process at one moment. `name` is the part ("bot0", "worker", "redis") for its main process
    and "<part>-child" for a descendant; `recycled` marks a child that lives one task."""

    at_s: float
    name: str
    pid: int
    rss_mb: float
    fds: int
    tcp: int
    tcp_established: int
    threads: int
    recycled: bool = False


@dataclass(frozen=True)
class Count:
    """A server's count at one moment ("postgres_connections", "redis_clients"); None: no answer."""

    at_s: float
    name: str
    value: int | None


def roots_of(system: System) -> list[Root]:
    """The soak's redis-server and every process of the system that runs now."""
    redis_proc = system.redis.proc
    found = [Root("redis", redis_proc.pid)] if redis_proc is not None and redis_proc.poll() is None else []
    for process in system.processes():
        pid = process.pid
        if pid is not None:
            found.append(Root(process.name, pid, process.children_recycled))
    return found


def measure(process: psutil.Process, at_s: float, name: str, recycled: bool = False) -> Sample | None:
    try:
        with process.oneshot():
            connections = process.net_connections(kind="tcp")
            return Sample(
                at_s, name, process.pid, round(process.memory_info().rss / MB, 2), process.num_fds(),
                len(connections), sum(1 for c in connections if c.status == psutil.CONN_ESTABLISHED),
                process.num_threads(), recycled,
            )  # fmt: skip
    except psutil.Error:  # it exited between the listing and the reading
        return None


def family(root: Root, at_s: float) -> list[Sample]:
    """The part's main process and every descendant it has now."""
    try:
        main = psutil.Process(root.pid)
        children = main.children(recursive=True)
    except psutil.Error:
        return []
    taken = [measure(main, at_s, root.part)]
    taken += [measure(child, at_s, root.part + CHILD, root.children_recycled) for child in children]
    return [sample for sample in taken if sample is not None]


def postgres_connections(dsn: str) -> int | None:
    """Client sessions on the DSN's database, this one left out."""
    try:
        with psycopg.connect(
            dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, application_name=SAMPLER_NAME
        ) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
                " AND application_name <> %s",
                (SAMPLER_NAME,),
            ).fetchone()
    except psycopg.Error:  # the server is restarting, or a fault cut this session
        return None
    return int(row[0]) if row else None


def redis_clients(url: str) -> int | None:
    """connected_clients, this client left out."""
    client = redis.Redis.from_url(
        url, socket_timeout=CONNECT_TIMEOUT_S, socket_connect_timeout=CONNECT_TIMEOUT_S
    )
    try:
        return int(client.info("clients")["connected_clients"]) - 1
    except redis.RedisError:  # down (a fault), or restarting
        return None
    finally:
        client.close()


@dataclass
class Sampler:
    """Samples every `every_s` seconds, from `started` (time.monotonic()), until cancelled; appends
    each sample to `path` as a JSON line when given."""

    roots: Callable[[], Sequence[Root]]
    started: float
    every_s: float
    dsn: str | None = None
    redis_url: str | None = None
    path: Path | None = None
    samples: list[Sample] = field(default_factory=list)
    counts: list[Count] = field(default_factory=list)

    def take(self) -> None:
        at = round(time.monotonic() - self.started, 2)
        samples = [sample for root in self.roots() for sample in family(root, at)]
        counts = []
        if self.dsn is not None:
            counts.append(Count(at, "postgres_connections", postgres_connections(self.dsn)))
        if self.redis_url is not None:
            counts.append(Count(at, "redis_clients", redis_clients(self.redis_url)))
        self.samples += samples
        self.counts += counts
        if self.path is not None:
            lines = [{"kind": "process", **asdict(s)} for s in samples]
            lines += [{"kind": "server", **asdict(c)} for c in counts]
            with self.path.open("a") as out:
                out.writelines(json.dumps(line) + "\n" for line in lines)

    async def run(self) -> None:
        while True:
            began = time.monotonic()
            # psutil and the two clients block: off the soak's loop, which runs the people and the fake API.
            await asyncio.to_thread(self.take)
            await asyncio.sleep(max(0.0, self.every_s - (time.monotonic() - began)))
