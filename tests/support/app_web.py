"""Mini-apps built by the real build path and served by the real web server on a loopback port:
what the browser tests open (and `bench/apps.py --screenshots`).

`AppSite` runs `bot/web`'s server with the app hosting and `/admin` over one SQLite store; `build`
is `core/app_build.py: build_app` with the shipped templates, as the build job runs it.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from aiohttp import web

from bot.core.app_build import BuildPolicy, BuildRequest, Built, build_app
from bot.core.ports import Inference
from bot.store.sqlite import SqliteStore
from bot.web.admin import AdminPage
from bot.web.app import WebServer, build_web_app
from bot.web.app_hosting import AppHosting
from bot.web.app_render import TemplateRenderer

ADMIN_PASSWORD = "browser-admin-pw"
RENDERER = TemplateRenderer()


async def _queue_depths() -> dict[str, int]:
    return {"gpu": 0, "train": 0, "build": 1, "default": 2}


@dataclass
class AppSite:
    store: SqliteStore
    base_url: str

    def url(self, built: Built | str) -> str:
        token = built if isinstance(built, str) else built.app.token
        return f"{self.base_url}/a/{token}"

    async def build(
        self, text: str, *, owner: str | None = None, inference: Inference | None = None
    ) -> Built:
        """One /app request from a new person (so never a cache hit), built and stored."""
        who = owner or f"browser:{secrets.token_hex(6)}"
        request = BuildRequest(secrets.token_hex(8), who, who, text)
        return await build_app(self.store.apps, RENDERER, request, [], datetime.now(UTC),
                               policy=BuildPolicy(max_concurrent=8), inference=inference)  # fmt: skip


@asynccontextmanager
async def app_site(directory: Path) -> AsyncIterator[AppSite]:
    """The web server on 127.0.0.1 with a port of its own, apps and /admin over a fresh store."""
    store = await SqliteStore.open(directory / "apps.db")

    async def health() -> dict[str, object]:
        return {}

    admin = AdminPage(store, _queue_depths, ADMIN_PASSWORD)
    server = WebServer(build_web_app(webhooks={}, health=health, admin=admin, apps=AppHosting(store.apps)))
    try:
        port = await server.start("127.0.0.1", 0)
        yield AppSite(store, f"http://127.0.0.1:{port}")
    finally:
        await server.stop()
        await store.close()


@dataclass
class Canary:
    """A loopback server that records every request: a payload that ran would call it."""

    base_url: str
    hits: list[str]


@asynccontextmanager
async def canary() -> AsyncIterator[Canary]:
    hits: list[str] = []

    async def record(request: web.Request) -> web.Response:
        hits.append(f"{request.method} {request.path_qs}")
        return web.Response(text="pwned", headers={"Access-Control-Allow-Origin": "*"})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", record)
    server = WebServer(app)
    try:
        port = await server.start("127.0.0.1", 0)
        yield Canary(f"http://127.0.0.1:{port}", hits)
    finally:
        await server.stop()
