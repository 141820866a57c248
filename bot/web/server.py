"""Kindred's one web server: platform webhooks, /healthz, the /admin page (`admin.py`), the
mini-apps (`miniapps/hosting.py`) and each person's settings page (`settings_page.py`).

It knows nothing of Telegram or Discord: a webhook is a path and a function from (headers, body) to
(status, text), handed in by the composition root.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from bot.web.admin import AdminPage
from bot.web.miniapps.hosting import AppHosting
from bot.web.settings_page import SettingsPage

log = logging.getLogger(__name__)

WebhookHandler = Callable[[Mapping[str, str], bytes], Awaitable[tuple[int, str]]]
HealthCheck = Callable[[], Awaitable[Mapping[str, Any]]]
# Telegram updates are a few KiB; anything far larger is not an update.
MAX_BODY_BYTES = 1 << 20


def build_web_app(
    *,
    webhooks: Mapping[str, WebhookHandler],
    health: HealthCheck,
    admin: AdminPage | None = None,
    apps: AppHosting | None = None,
    settings: SettingsPage | None = None,
) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    if apps is not None:
        apps.add_routes(app.router)
    if settings is not None:
        settings.add_routes(app.router)
    if admin is not None:
        app.router.add_get("/admin", admin.handle)

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"ok": True, **(await health())})

    app.router.add_get("/healthz", healthz)
    for path, handler in webhooks.items():
        app.router.add_post(path, _webhook_route(handler))
    return app


def _webhook_route(handler: WebhookHandler) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def route(request: web.Request) -> web.Response:
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return web.Response(status=413, text="too large")
        status, text = await handler(request.headers, body)
        return web.Response(status=status, text=text)

    return route


class WebServer:
    def __init__(self, app: web.Application) -> None:
        self.app = app
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen; returns the bound port (useful with port 0)."""
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else port
        log.info("web: listening on %s:%s", host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
