"""The AppStore on either database: one implementation over the SQL both dialects share.

Each dialect supplies a `Runner` (sqlite_apps, pg_apps): statements in one transaction, rows by
column name, and how to hold a person's builds still while their count is read (SQLite's write
lock already does; PostgreSQL takes an advisory lock).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from typing import Any, Protocol, cast

from bot.core.miniapps.models import (
    AppRecord,
    AppVersion,
    BuildRecord,
    BuildStatus,
    NewVersion,
    Rendered,
    SpecSource,
)
from bot.store.sql.rows import Dialect, NamedRow

_APP_COLUMNS = (
    "id, owner, chat_id, token, kind, title, version, latest, created_at, updated_at, revoked_at, turn_id"
)
_INSERT_APP = f"""
INSERT INTO apps (owner, chat_id, token, kind, title, version, latest, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, 1, 1, ?, ?) RETURNING {_APP_COLUMNS}
"""
_NEXT_VERSION = f"""
UPDATE apps SET latest = latest + 1, version = latest + 1, kind = ?, title = ?, updated_at = ?
WHERE id = ? RETURNING {_APP_COLUMNS}
"""
_INSERT_VERSION = """
INSERT INTO app_versions (app_id, version, kind, title, spec, html, script_hashes, style_hashes, request,
                          request_key, source, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_SERVE = f"""
UPDATE apps SET version = ?, title = (SELECT title FROM app_versions WHERE app_id = ? AND version = ?),
       updated_at = ?
WHERE id = ? AND owner = ? AND revoked_at IS NULL
  AND EXISTS (SELECT 1 FROM app_versions WHERE app_id = ? AND version = ?)
RETURNING {_APP_COLUMNS}
"""
_BY_TOKEN = f"SELECT {_APP_COLUMNS} FROM apps WHERE token = ?"
_BY_ID = f"SELECT {_APP_COLUMNS} FROM apps WHERE id = ? AND owner = ?"
_LIST = f"SELECT {_APP_COLUMNS} FROM apps WHERE owner = ? ORDER BY updated_at DESC, id DESC LIMIT ?"
_CACHED = f"""
SELECT {", ".join("a." + c.strip() for c in _APP_COLUMNS.split(","))} FROM apps a
JOIN app_versions v ON v.app_id = a.id AND v.version = a.version
WHERE a.owner = ? AND a.revoked_at IS NULL AND v.request_key = ? ORDER BY a.updated_at DESC LIMIT 1
"""
_VERSION = "SELECT * FROM app_versions WHERE app_id = ? AND version = ?"
_DELIVERED = "UPDATE apps SET turn_id = ? WHERE id = ?"
_REVOKE = """
UPDATE apps SET revoked_at = ?, updated_at = ? WHERE id = ? AND owner = ? AND revoked_at IS NULL RETURNING id
"""
_BUILD_COLUMNS = "key, owner, status, step, message, app_id, started_at"
_GET_BUILD = f"SELECT {_BUILD_COLUMNS} FROM app_builds WHERE key = ?"
_FAIL_STALE = """
UPDATE app_builds SET status = 'failed', message = 'stopped answering', finished_at = ?
WHERE owner = ? AND status = 'running' AND heartbeat_at < ?
"""
_RUNNING = "SELECT count(*) AS n FROM app_builds WHERE owner = ? AND status = 'running' AND key <> ?"
_INSERT_BUILD = f"""
INSERT INTO app_builds (key, owner, status, started_at, heartbeat_at) VALUES (?, ?, 'running', ?, ?)
RETURNING {_BUILD_COLUMNS}
"""
_RESUME_BUILD = f"""
UPDATE app_builds SET status = 'running', heartbeat_at = ?, finished_at = NULL, message = ''
WHERE key = ? RETURNING {_BUILD_COLUMNS}
"""
_STEP = "UPDATE app_builds SET step = ?, heartbeat_at = ? WHERE key = ?"
_FINISH = """
UPDATE app_builds SET status = ?, message = ?, app_id = ?, finished_at = ?, heartbeat_at = ? WHERE key = ?
"""
_READ_STATE = "SELECT key, value FROM app_state WHERE app_id = ? ORDER BY key"
_STATE_SIZE = "SELECT coalesce(sum(size), 0) AS n FROM app_state WHERE app_id = ? AND key <> ?"
_WRITE_STATE = """
INSERT INTO app_state (app_id, key, value, size, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (app_id, key) DO UPDATE SET value = excluded.value, size = excluded.size,
                                        updated_at = excluded.updated_at
"""


class Transaction(Protocol):
    async def __call__(self, sql: str, params: Sequence[Any] = ()) -> list[NamedRow]: ...


class Runner(Protocol):
    dialect: Dialect

    def transaction(self) -> AbstractAsyncContextManager[Transaction]: ...

    async def hold_owner(self, run: Transaction, owner: str) -> None:
        """Serialise this person's build starts until the transaction ends."""
        ...


class SqlApps:
    """AppStore over one dialect's Runner."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._d = runner.dialect
        self._sql: dict[str, str] = {}

    def _q(self, template: str) -> str:
        if template not in self._sql:
            self._sql[template] = self._d.sql(template)
        return self._sql[template]

    async def _one(self, sql: str, params: Sequence[Any]) -> NamedRow | None:
        async with self._runner.transaction() as run:
            rows = await run(self._q(sql), params)
        return rows[0] if rows else None

    # -- AppCatalog ---------------------------------------------------------------------------

    async def create_app(
        self, owner: str, chat_id: str, token: str, version: NewVersion, at: datetime
    ) -> AppRecord:
        moment = self._d.moment_param(at)
        async with self._runner.transaction() as run:
            rows = await run(
                self._q(_INSERT_APP), (owner, chat_id, token, version.kind, version.title, moment, moment)
            )
            app = self._app(rows[0])
            await run(self._q(_INSERT_VERSION), self._version_params(app.id, 1, version, at))
        return app

    async def add_version(self, app_id: int, version: NewVersion, at: datetime) -> AppRecord:
        async with self._runner.transaction() as run:
            rows = await run(
                self._q(_NEXT_VERSION), (version.kind, version.title, self._d.moment_param(at), app_id)
            )
            app = self._app(rows[0])
            await run(self._q(_INSERT_VERSION), self._version_params(app_id, app.latest, version, at))
        return app

    async def serve_version(self, owner: str, app_id: int, version: int, at: datetime) -> AppRecord | None:
        params = (version, app_id, version, self._d.moment_param(at), app_id, owner, app_id, version)
        row = await self._one(_SERVE, params)
        return None if row is None else self._app(row)

    async def app_by_token(self, token: str) -> AppRecord | None:
        row = await self._one(_BY_TOKEN, (token,))
        return None if row is None else self._app(row)

    async def get_app(self, owner: str, app_id: int) -> AppRecord | None:
        row = await self._one(_BY_ID, (app_id, owner))
        return None if row is None else self._app(row)

    async def get_version(self, app_id: int, version: int) -> AppVersion | None:
        row = await self._one(_VERSION, (app_id, version))
        if row is None:
            return None
        body = NewVersion(
            row["kind"],
            row["title"],
            self._d.json_object(row["spec"]),
            Rendered(
                row["html"], tuple(self._list(row["script_hashes"])), tuple(self._list(row["style_hashes"]))
            ),
            row["request"],
            row["request_key"],
            cast(SpecSource, row["source"]),
        )
        return AppVersion(int(row["app_id"]), int(row["version"]), self._d.moment(row["created_at"]), body)

    async def list_apps(self, owner: str, limit: int) -> list[AppRecord]:
        async with self._runner.transaction() as run:
            return [self._app(row) for row in await run(self._q(_LIST), (owner, limit))]

    async def find_cached(self, owner: str, request_key: str) -> AppRecord | None:
        row = await self._one(_CACHED, (owner, request_key))
        return None if row is None else self._app(row)

    async def revoke(self, owner: str, app_id: int, at: datetime) -> bool:
        moment = self._d.moment_param(at)
        return await self._one(_REVOKE, (moment, moment, app_id, owner)) is not None

    async def delivered(self, app_id: int, turn_id: int) -> None:
        async with self._runner.transaction() as run:
            await run(self._q(_DELIVERED), (turn_id, app_id))

    # -- AppBuilds ----------------------------------------------------------------------------

    async def start_build(
        self, key: str, owner: str, at: datetime, *, limit: int, stale_after: timedelta
    ) -> BuildRecord | None:
        moment = self._d.moment_param(at)
        async with self._runner.transaction() as run:
            await self._runner.hold_owner(run, owner)
            await run(self._q(_FAIL_STALE), (moment, owner, self._d.moment_param(at - stale_after)))
            running = await run(self._q(_RUNNING), (owner, key))
            if int(running[0]["n"]) >= limit:
                return None
            if await run(self._q(_GET_BUILD), (key,)):
                rows = await run(self._q(_RESUME_BUILD), (moment, key))
            else:
                rows = await run(self._q(_INSERT_BUILD), (key, owner, moment, moment))
        return self._build(rows[0])

    async def build_step(self, key: str, step: str, at: datetime) -> None:
        async with self._runner.transaction() as run:
            await run(self._q(_STEP), (step, self._d.moment_param(at), key))

    async def finish_build(
        self, key: str, status: BuildStatus, message: str, at: datetime, *, app_id: int | None = None
    ) -> None:
        moment = self._d.moment_param(at)
        async with self._runner.transaction() as run:
            await run(self._q(_FINISH), (status, message, app_id, moment, moment, key))

    async def get_build(self, key: str) -> BuildRecord | None:
        row = await self._one(_GET_BUILD, (key,))
        return None if row is None else self._build(row)

    # -- AppState -----------------------------------------------------------------------------

    async def read_state(self, app_id: int) -> dict[str, str]:
        async with self._runner.transaction() as run:
            return {row["key"]: row["value"] for row in await run(self._q(_READ_STATE), (app_id,))}

    async def write_state(self, app_id: int, key: str, value: str, *, quota_bytes: int, at: datetime) -> bool:
        size = len(key.encode()) + len(value.encode())
        async with self._runner.transaction() as run:
            await self._runner.hold_owner(run, f"app-state:{app_id}")
            others = await run(self._q(_STATE_SIZE), (app_id, key))
            if int(others[0]["n"]) + size > quota_bytes:
                return False
            await run(self._q(_WRITE_STATE), (app_id, key, value, size, self._d.moment_param(at)))
        return True

    # -- rows ---------------------------------------------------------------------------------

    def _version_params(self, app_id: int, number: int, version: NewVersion, at: datetime) -> tuple[Any, ...]:
        rendered = version.rendered
        return (
            app_id, number, version.kind, version.title, self._d.json_param(dict(version.spec)),
            rendered.html,
            self._d.json_param(list(rendered.script_hashes)), self._d.json_param(list(rendered.style_hashes)),
            version.request, version.request_key, version.source, self._d.moment_param(at),
        )  # fmt: skip

    def _list(self, value: Any) -> list[str]:
        loaded = self._d.json_object(value) if isinstance(value, str) else value
        return [str(item) for item in loaded]

    def _app(self, row: NamedRow) -> AppRecord:
        return AppRecord(
            id=int(row["id"]),
            owner=row["owner"],
            chat_id=row["chat_id"],
            token=row["token"],
            kind=row["kind"],
            title=row["title"],
            version=int(row["version"]),
            latest=int(row["latest"]),
            created_at=self._d.moment(row["created_at"]),
            updated_at=self._d.moment(row["updated_at"]),
            revoked=row["revoked_at"] is not None,
            turn_id=None if row["turn_id"] is None else int(row["turn_id"]),
        )

    def _build(self, row: NamedRow) -> BuildRecord:
        return BuildRecord(
            key=row["key"],
            owner=row["owner"],
            status=cast(BuildStatus, row["status"]),
            step=row["step"],
            message=row["message"],
            app_id=None if row["app_id"] is None else int(row["app_id"]),
            started_at=self._d.moment(row["started_at"]),
        )
