"""Mini-apps built by the real build path and served by the real web server on a loopback port:
what the browser tests open (and `bench/apps.py --screenshots`).

`AppSite` runs `bot/web`'s server with the app hosting and `/admin` over one SQLite store; `build`
is `core/miniapps/build.py: build_app` with the shipped templates, as the build job runs it.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from aiohttp import web

from bot.core.chat.ports import Inference
from bot.core.miniapps.build import BuildPolicy, BuildRequest, Built, build_app
from bot.core.usage import Allowance, UsageMeter, UsageReport
from bot.shared_state.local_holds import LocalHolds
from bot.store.sqlite.store import SqliteStore
from bot.web.admin import AdminPage
from bot.web.miniapps.hosting import AppHosting, AppHostingOptions
from bot.web.miniapps.render import TemplateRenderer
from bot.web.server import WebServer, build_web_app
from tests.support.budgets import Budgets

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
        self,
        text: str,
        *,
        owner: str | None = None,
        inference: Inference | None = None,
        free_form: bool = False,
    ) -> Built:
        """One /app request from a new person (so never a cache hit), built and stored; `free_form`:
        the model may write the page itself."""
        who = owner or f"browser:{secrets.token_hex(6)}"
        request = BuildRequest(secrets.token_hex(8), who, who, text)
        policy = BuildPolicy(max_concurrent=8, free_form=free_form)
        return await build_app(self.store.miniapps, RENDERER, request, [], datetime.now(UTC),
                               policy=policy, inference=inference)  # fmt: skip


# The budgets /admin shows what is left of.
SITE_BUDGETS = "[everyone]\ntokens_per_day = 5000\n"


@asynccontextmanager
async def app_site(
    directory: Path, *, state_quota_bytes: int | None = None, telegram_key: bytes | None = None
) -> AsyncIterator[AppSite]:
    """The web server on 127.0.0.1 with a port of its own, apps and /admin over a fresh store."""
    store = await SqliteStore.open(directory / "apps.db")

    async def health() -> dict[str, object]:
        return {}

    meter = UsageMeter(store.usage)
    allowance = Allowance(store.usage, LocalHolds(), Budgets(SITE_BUDGETS), meter)
    usage = UsageReport(store.usage, allowance=allowance, meter=meter)
    admin = AdminPage(store, _queue_depths, ADMIN_PASSWORD, usage=usage)
    options = AppHostingOptions(telegram_key=telegram_key)
    if state_quota_bytes is not None:
        options = replace(options, state_quota_bytes=state_quota_bytes)
    hosting = AppHosting(store.miniapps, options)
    server = WebServer(build_web_app(webhooks={}, health=health, admin=admin, apps=hosting))
    try:
        port = await server.start("127.0.0.1", 0)
        yield AppSite(store, f"http://127.0.0.1:{port}")
    finally:
        await server.stop()
        await store.close()


@asynccontextmanager
async def loopback(handler: Callable[[web.Request], Awaitable[web.Response]]) -> AsyncIterator[str]:
    """A server on 127.0.0.1 answering every path with `handler`; yields its base URL."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    server = WebServer(app)
    try:
        yield f"http://127.0.0.1:{await server.start('127.0.0.1', 0)}"
    finally:
        await server.stop()


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

    async with loopback(record) as base_url:
        yield Canary(base_url, hits)


@dataclass
class BarePages:
    """Pages served as they are, with no header at all: no CSP, no sandbox. A loopback server,
    as Chromium lets only a loopback page reach the loopback canary."""

    base_url: str
    pages: dict[str, str]

    def add(self, html: str) -> str:
        path = f"/{secrets.token_hex(8)}"
        self.pages[path] = html
        return self.base_url + path


@asynccontextmanager
async def bare_pages() -> AsyncIterator[BarePages]:
    pages: dict[str, str] = {}

    async def serve(request: web.Request) -> web.Response:
        if request.path.endswith("/state"):  # an app's state, as the real server answers it
            return web.json_response({}, headers={"Access-Control-Allow-Origin": "*"})
        return web.Response(text=pages.get(request.path, "missing"), content_type="text/html")

    async with loopback(serve) as base_url:
        yield BarePages(base_url, pages)
