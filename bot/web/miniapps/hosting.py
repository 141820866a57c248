"""Serving mini-apps: each at an unguessable link, sandboxed, with a strict CSP, and its state.

Isolation: every app is answered with CSP `sandbox allow-scripts allow-forms` (no
`allow-same-origin`), so even opened at the top level, as Telegram's web view and a browser tab
open it, the page runs in an opaque origin: it can read no cookie, storage or page of this server
(/admin, the webhooks) nor of another app. A separate apps host (KINDRED_APPS_URL) adds a second
wall; it is not needed for the first. Its state therefore lives here, per app, under a quota,
reached by the link's own secret: an opaque origin has no localStorage, and a shared one would let
every app read the others'.

Inside Telegram, identity matters for the state: the app's runtime sends Telegram's signed
`initData` with each state request (`X-Telegram-Init-Data`), and a request carrying it is served
only when it is Telegram's, fresh, and from the app's owner; otherwise a 401 or 403 says why and
nothing is read or stored. A request without it (a browser tab, a downloaded file) has the link.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from aiohttp import web

from bot.core.errors import StoreError
from bot.core.learning.ports import RewardLog
from bot.core.learning.signals import record_tool_use
from bot.core.miniapps.models import AppRecord, AppVersion
from bot.core.miniapps.ports import AppStore
from bot.web.telegram_init import MAX_AGE, InitDataRefused, verify_init_data

log = logging.getLogger(__name__)
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{22,64}$")
# Telegram's web clients show a mini-app in an iframe of their own page; nothing else may frame it.
FRAME_ANCESTORS = "https://web.telegram.org"
_COMMON = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "cross-origin",
}
MAX_KEY_CHARS = 40
INIT_DATA_HEADER = "X-Telegram-Init-Data"


@dataclass(frozen=True, slots=True)
class AppHostingOptions:
    # The apps' origin as links name it (scheme://host[:port]); None: each request's own host.
    apps_url: str | None = None
    state_quota_bytes: int = 65536
    # telegram_init.secret_key(bot token), never the token; None: no Telegram bot, and initData is refused.
    telegram_key: bytes | None = field(default=None, repr=False)
    init_data_max_age: timedelta = MAX_AGE


def csp(version: AppVersion, origin: str) -> str:
    rendered = version.body.rendered
    scripts = " ".join(f"'{digest}'" for digest in rendered.script_hashes)
    styles = " ".join(f"'{digest}'" for digest in rendered.style_hashes)
    return (
        f"default-src 'none'; script-src {scripts}; style-src {styles}; img-src data:; "
        f"connect-src {origin}; form-action 'none'; base-uri 'none'; "
        f"frame-ancestors {FRAME_ANCESTORS}; sandbox allow-scripts allow-forms"
    )


def download_name(title: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()[:40]
    return f"{stem or 'app'}.html"


class AppHosting:
    """The routes under /a/: the app, its download, its state."""

    def __init__(
        self,
        apps: AppStore,
        options: AppHostingOptions = AppHostingOptions(),
        rewards: RewardLog | None = None,
    ) -> None:
        self._apps = apps
        self._options = options
        self._rewards = rewards

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/a/{token}", self._served(self._page))
        router.add_get("/a/{token}/download", self._served(self._download))
        router.add_get("/a/{token}/state", self._served(self._read_state))
        router.add_post("/a/{token}/state", self._served(self._write_state))
        router.add_route("OPTIONS", "/a/{token}/state", self._preflight)

    def _origin(self, request: web.Request) -> str:
        if self._options.apps_url:
            parts = urlsplit(self._options.apps_url)
            return f"{parts.scheme}://{parts.netloc}"
        return f"{request.scheme}://{request.host}"

    def _served(
        self, handler: Callable[[web.Request, AppRecord], Awaitable[web.Response]]
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def route(request: web.Request) -> web.Response:
            token = request.match_info["token"]
            app = await self._apps.app_by_token(token) if _TOKEN.match(token) else None
            if app is None or app.revoked:
                return web.Response(status=404, text="not found", headers=_COMMON)
            return await handler(request, app)

        return route

    async def _version(self, app: AppRecord) -> AppVersion | None:
        return await self._apps.get_version(app.id, app.version)

    async def _page(self, request: web.Request, app: AppRecord) -> web.Response:
        version = await self._version(app)
        if version is None:
            return web.Response(status=404, text="not found", headers=_COMMON)
        await self._opened(app)
        headers = {**_COMMON, "Content-Security-Policy": csp(version, self._origin(request))}
        return web.Response(text=version.body.rendered.html, content_type="text/html", headers=headers)

    async def _opened(self, app: AppRecord) -> None:
        """Opening an app is one tool use (α) of the turn that delivered it: once per delivery."""
        if self._rewards is None or app.turn_id is None:
            return
        try:
            await record_tool_use(
                self._rewards, app.turn_id, f"app-open:{app.id}:{app.turn_id}", datetime.now(UTC)
            )
        except StoreError as exc:  # the app opens anyway
            log.warning("app opening not recorded: %s", exc)

    async def _download(self, request: web.Request, app: AppRecord) -> web.Response:
        version = await self._version(app)
        if version is None:
            return web.Response(status=404, text="not found", headers=_COMMON)
        headers = {
            **_COMMON,
            "Content-Security-Policy": "default-src 'none'; sandbox",
            "Content-Disposition": f'attachment; filename="{download_name(app.title)}"',
        }
        return web.Response(text=version.body.rendered.html, content_type="text/html", headers=headers)

    def _refused_opener(self, request: web.Request, app: AppRecord) -> web.Response | None:
        """Why a state request that carries Telegram's initData may not go on; None: it may."""
        init_data = request.headers.get(INIT_DATA_HEADER)
        if init_data is None:
            return None
        key = self._options.telegram_key
        if key is None:
            return _refusal(401, "this server has no Telegram bot to check initData with")
        try:
            opener = verify_init_data(
                init_data, key, datetime.now(UTC), max_age=self._options.init_data_max_age
            )
        except InitDataRefused as exc:
            return _refusal(401, str(exc))
        if opener.owner != app.owner:
            return _refusal(403, "this app belongs to someone else")
        return None

    async def _read_state(self, request: web.Request, app: AppRecord) -> web.Response:
        if (refused := self._refused_opener(request, app)) is not None:
            return refused
        state = await self._apps.read_state(app.id)
        return web.json_response(state, headers=_state_headers())

    async def _write_state(self, request: web.Request, app: AppRecord) -> web.Response:
        if (refused := self._refused_opener(request, app)) is not None:
            return refused
        quota = self._options.state_quota_bytes
        if request.content_length is not None and request.content_length > quota + 1024:
            return _refusal(413, "too large")
        body = await request.content.read(quota + 1025)
        try:
            entry = json.loads(body)
        except ValueError:
            entry = None
        key = entry.get("key") if isinstance(entry, dict) else None
        value = entry.get("value") if isinstance(entry, dict) else None
        if not isinstance(key, str) or not isinstance(value, str) or not 0 < len(key) <= MAX_KEY_CHARS:
            return _refusal(400, "want {key, value}")
        kept = await self._apps.write_state(app.id, key, value, quota_bytes=quota, at=datetime.now(UTC))
        if not kept:
            return _refusal(413, "quota")
        return web.json_response({"ok": True}, headers=_state_headers())

    async def _preflight(self, request: web.Request) -> web.Response:
        return web.Response(status=204, headers=_state_headers())


def _refusal(status: int, error: str) -> web.Response:
    return web.json_response({"ok": False, "error": error}, status=status, headers=_state_headers())


def _state_headers() -> dict[str, str]:
    # The link's secret is the key: no cookie or credential rides on these requests, and an app's
    # opaque origin sends `Origin: null`, so any origin may call with the secret it holds.
    return {
        **_COMMON,
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": "GET, POST",
        "Access-Control-Allow-Headers": f"Content-Type, {INIT_DATA_HEADER}",
    }
