"""The mini-apps room's boundaries: the catalog, builds, each app's state, and the renderer."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from bot.core.miniapps.models import AppRecord, AppVersion, BuildRecord, BuildStatus, NewVersion, Rendered
from bot.core.models import (
    JSONObject,
)


class AppCatalog(Protocol):
    """Mini-apps and their versions. Every version is a whole app; the served one is `version`."""

    async def create_app(
        self, owner: str, chat_id: str, token: str, version: NewVersion, at: datetime
    ) -> AppRecord:
        """A new app whose version 1 is `version`."""
        ...

    async def add_version(self, app_id: int, version: NewVersion, at: datetime) -> AppRecord:
        """Version latest + 1, served from now on."""
        ...

    async def serve_version(self, owner: str, app_id: int, version: int, at: datetime) -> AppRecord | None:
        """Serve an existing version again (restore). None: no such app of theirs or version."""
        ...

    async def app_by_token(self, token: str) -> AppRecord | None:
        """The app behind a link, revoked ones included (the caller answers 404 for those)."""
        ...

    async def get_app(self, owner: str, app_id: int) -> AppRecord | None: ...

    async def get_version(self, app_id: int, version: int) -> AppVersion | None: ...

    async def list_apps(self, owner: str, limit: int) -> list[AppRecord]:
        """The person's apps, the latest changed first, revoked ones included."""
        ...

    async def find_cached(self, owner: str, request_key: str) -> AppRecord | None:
        """The person's live app whose served version was built from this request key."""
        ...

    async def revoke(self, owner: str, app_id: int, at: datetime) -> bool:
        """Revoke the link for good. False: no such app of theirs, or already revoked."""
        ...

    async def delivered(self, app_id: int, turn_id: int) -> None:
        """The assistant turn that has just delivered the app's link."""
        ...


class AppBuilds(Protocol):
    """Builds in flight, per person: the concurrency limit and the progress a chat shows."""

    async def start_build(
        self, key: str, owner: str, at: datetime, *, limit: int, stale_after: timedelta
    ) -> BuildRecord | None:
        """Start (or, for a redelivered job, resume) the build `key`. None: the person already has
        `limit` other builds running; builds silent past `stale_after` count as failed."""
        ...

    async def build_step(self, key: str, step: str, at: datetime) -> None: ...

    async def finish_build(
        self, key: str, status: BuildStatus, message: str, at: datetime, *, app_id: int | None = None
    ) -> None: ...

    async def get_build(self, key: str) -> BuildRecord | None: ...


class AppState(Protocol):
    """A small key-value store per app: what the app keeps across reloads, under a size quota."""

    async def read_state(self, app_id: int) -> dict[str, str]: ...

    async def write_state(self, app_id: int, key: str, value: str, *, quota_bytes: int, at: datetime) -> bool:
        """Set one key. False (and nothing written) when the app's keys and values would pass
        `quota_bytes` in UTF-8."""
        ...


class AppStore(AppCatalog, AppBuilds, AppState, Protocol):
    """Everything the mini-apps keep."""


class AppRenderer(Protocol):
    """Turns a kind's spec into one self-contained HTML file, and judges such a file."""

    def render(self, kind: str, spec: JSONObject) -> Rendered: ...

    def problems(self, rendered: Rendered) -> list[str]:
        """Why the file must not be served (empty: it may be)."""
        ...

    def free_form(
        self, spec: JSONObject, page: str, untrusted: Sequence[str]
    ) -> tuple[Rendered | None, list[str]]:
        """A capable model's whole page made into an app (the spec and runtime added), and why it
        must not be served (empty: it may be); `untrusted` is text from the person's request."""
        ...
