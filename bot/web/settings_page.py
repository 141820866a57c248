"""/s/<token>: a person's /settings as a web page, reached through the signed, expiring link that
`/settings web` gives (core/settings/links.py).

The link is the only credential, and it names its person: the page shows and changes that
person's settings and nobody else's, whoever opens it and whatever cookies or ids their browser
carries (this server sets and reads none). A link that is expired or not signed by this server
gets a page that says so, and nothing is read or changed.

A change is a plain form POST to the same link: no script runs on this page (the CSP allows none,
nor any load but its own style), so it needs no sandbox to keep its token from a script. A POST is
taken only from this page itself: Origin must name this server (and Sec-Fetch-Site, where the
browser sends it, say same-origin), so another site cannot make a visitor's browser post a change.
Unlike a mini-app, the page is not sandboxed: an opaque origin would send `Origin: null` and
make that check impossible; it is Kindred's own fixed template, and the rows' words are escaped.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC
from html import escape
from urllib.parse import urlsplit

from aiohttp import web

from bot.core.settings import LinkClaim, RowView, SettingsLinks, SettingsScreen, Who
from bot.core.settings.links import EXPIRED, PATH

STYLE = (
    "body{font:16px/1.45 system-ui,sans-serif;margin:0 auto;max-width:34rem;padding:1rem;"
    "color:#1b1b1f;background:#fafafa}h1{font-size:1.4rem}fieldset{border:1px solid #c8c8d0;"
    "border-radius:.5rem;margin:0 0 .8rem;padding:.6rem .8rem}legend{font-weight:600}"
    "p{margin:.2rem 0 .5rem}button{font:inherit;margin:0 .4rem .3rem 0;padding:.35rem .8rem;"
    "border:1px solid #5a5a66;border-radius:.4rem;background:#fff;color:#1b1b1f}"
    "button[aria-pressed=true]{background:#1f4fa8;border-color:#1f4fa8;color:#fff}"
    ".answer{background:#e8f0ff;border-left:4px solid #1f4fa8;padding:.5rem .8rem;white-space:pre-line}"
    "small{color:#4a4a55}"
)
EXPIRED_PAGE = ("This settings link has expired", "Send /settings web to me for a new link.")
INVALID_PAGE = ("This settings link is not valid", "Send /settings web to me for a link that works.")
CROSS_SITE = (
    "Not changed",
    "That change came from another site, so I did not make it. Use the buttons on your settings page.",
)


def style_hash() -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")


def headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src '{style_hash()}'; form-action 'self'; "
            "base-uri 'none'; frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        # same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the
        # form's POST, and the same-origin check could not tell the page from another site.
        "Referrer-Policy": "same-origin",
        "Cache-Control": "no-store",
        "X-Frame-Options": "DENY",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
    }


def document(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><h1>{escape(title)}</h1>{body}</body></html>"
    )


def row_form(view: RowView, action: str) -> str:
    said = f"<p>{escape(view.value)}</p>"
    if not view.choices:
        return f"<fieldset><legend>{escape(view.name)}</legend>{said}</fieldset>"
    buttons = "".join(
        f'<button type="submit" name="value" value="{escape(c.value)}" '
        f'aria-pressed="{"true" if c.value == view.current else "false"}">{escape(c.label)}</button>'
        for c in view.choices
    )
    return (
        f'<form method="post" action="{escape(action)}"><fieldset><legend>{escape(view.name)}</legend>'
        f'{said}<input type="hidden" name="row" value="{escape(view.key)}">{buttons}</fieldset></form>'
    )


class SettingsPage:
    """The routes under /s/. `origin`: the links' own origin (scheme://host[:port]), accepted
    besides the request's Host, for a server behind a proxy that renames it."""

    def __init__(self, screen: SettingsScreen, links: SettingsLinks) -> None:
        self._screen = screen
        self._links = links
        self._origin = urlsplit(links.base_url).netloc

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get(PATH + "{token}", self._get)
        router.add_post(PATH + "{token}", self._post)

    async def _get(self, request: web.Request) -> web.Response:
        claim = self._claim(request)
        if isinstance(claim, web.Response):
            return claim
        return await self._page(request, claim, "")

    async def _post(self, request: web.Request) -> web.Response:
        claim = self._claim(request)
        if isinstance(claim, web.Response):
            return claim
        if not self._same_origin(request):
            return _refusal(403, *CROSS_SITE)
        form = await request.post()
        row, value = form.get("row"), form.get("value")
        if not isinstance(row, str) or not isinstance(value, str):
            return await self._page(request, claim, "Choose a setting with one of its buttons.", status=400)
        answer = await self._screen.choose(_who(claim), row[:40], value[:100])
        return await self._page(request, claim, answer)

    def _claim(self, request: web.Request) -> LinkClaim | web.Response:
        claim = self._links.read(request.match_info["token"])
        if claim == EXPIRED:
            return _refusal(410, *EXPIRED_PAGE)
        if isinstance(claim, str):
            return _refusal(404, *INVALID_PAGE)
        return claim

    def _same_origin(self, request: web.Request) -> bool:
        site = request.headers.get("Sec-Fetch-Site")
        origin = request.headers.get("Origin", "")
        if site is not None and site != "same-origin":
            return False
        host = urlsplit(origin).netloc if origin.startswith(("http://", "https://")) else ""
        return bool(host) and host in (request.host, self._origin)

    async def _page(
        self, request: web.Request, claim: LinkClaim, answer: str, *, status: int = 200
    ) -> web.Response:
        who = _who(claim)
        views = await self._screen.views(who)
        action = request.path
        told = f'<p class="answer" role="status">{escape(answer)}</p>' if answer else ""
        until = claim.expires.astimezone(UTC)
        body = (
            told
            + "".join(row_form(view, action) for view in views)
            + f"<small>This page is for you alone. Its link works until {until:%H:%M} UTC.</small>"
        )
        return web.Response(
            status=status, text=document("Your settings", body), content_type="text/html", headers=headers()
        )


def _who(claim: LinkClaim) -> Who:
    # A link is given only in the person's private chat, so its chat is theirs to set.
    return Who(claim.person, claim.chat, private_chat=True, only_they_see=True, may_change_chat=True)


def _refusal(status: int, title: str, why: str) -> web.Response:
    body = document(title, f"<p>{escape(why)}</p>")
    return web.Response(status=status, text=body, content_type="text/html", headers=headers())
