"""Hosting mini-apps through aiohttp's test client on a real SQLite store: the headers that keep an
app sandboxed and loading nothing, 404 for anything but a live link, the download, and state."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.core.miniapps.facts import Facts
from bot.core.miniapps.models import AppRecord, NewVersion
from bot.core.miniapps.specs import rule_spec
from bot.store.sqlite.store import SqliteStore
from bot.web.miniapps.hosting import AppHosting, AppHostingOptions, download_name
from bot.web.miniapps.render import render_app
from bot.web.server import build_web_app

NOW = datetime(2026, 12, 1, tzinfo=UTC)
QUOTA = 2048


async def _app(store: SqliteStore, owner: str = "telegram:1") -> AppRecord:
    spec = rule_spec("checklist", "a beach packing list", Facts(), NOW.date())
    version = NewVersion("checklist", spec["title"], spec, render_app("checklist", spec), "r", "k", "rules")
    return await store.miniapps.create_app(owner, owner, secrets.token_urlsafe(24), version, NOW)


@pytest.fixture
async def web(store: SqliteStore) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    async def health() -> dict[str, object]:
        return {}

    hosting = AppHosting(store.miniapps, AppHostingOptions("https://apps.example:8443/ignored", QUOTA))
    client = TestClient(TestServer(build_web_app(webhooks={}, health=health, apps=hosting)))
    await client.start_server()
    yield client
    await client.close()


async def test_an_app_is_served_sandboxed_with_a_strict_csp_and_no_cookies(
    store: SqliteStore,
    web: TestClient,  # type: ignore[type-arg]
) -> None:
    app = await _app(store)
    version = await store.miniapps.get_version(app.id, 1)
    assert version is not None
    response = await web.get(f"/a/{app.token}")
    assert response.status == 200 and response.content_type == "text/html"
    policy = {
        part.split()[0]: part.split()[1:] for part in response.headers["Content-Security-Policy"].split("; ")
    }
    assert policy["default-src"] == ["'none'"]
    assert policy["script-src"] == [f"'{digest}'" for digest in version.body.rendered.script_hashes]
    assert policy["style-src"] == [f"'{digest}'" for digest in version.body.rendered.style_hashes]
    assert policy["connect-src"] == ["https://apps.example:8443"]
    assert policy["sandbox"] == ["allow-scripts", "allow-forms"]  # no allow-same-origin: an opaque origin
    assert policy["frame-ancestors"] == ["https://web.telegram.org"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "Set-Cookie" not in response.headers
    assert await response.text() == version.body.rendered.html


async def test_only_a_live_link_opens_anything(store: SqliteStore, web: TestClient) -> None:  # type: ignore[type-arg]
    app = await _app(store)
    for path in ("/a/nope", "/a/" + "A" * 32, "/a/../admin", f"/a/{app.token}x", "/a/%3Cscript%3E"):
        assert (await web.get(path)).status == 404, path
    assert await store.miniapps.revoke(app.owner, app.id, NOW)
    for suffix in ("", "/download", "/state"):
        assert (await web.get(f"/a/{app.token}{suffix}")).status == 404
    assert (
        await web.post(f"/a/{app.token}/state", data=json.dumps({"key": "a", "value": "1"}))
    ).status == 404


async def test_an_app_downloads_as_its_single_file(store: SqliteStore, web: TestClient) -> None:  # type: ignore[type-arg]
    app = await _app(store)
    response = await web.get(f"/a/{app.token}/download")
    assert response.status == 200
    assert response.headers["Content-Disposition"] == f'attachment; filename="{download_name(app.title)}"'
    assert "<!doctype html>" in await response.text()
    assert download_name('"; evil=1 <x>') == "evil-1-x.html" and download_name("ÄÖ") == "app.html"


async def test_state_persists_per_app_under_its_quota(store: SqliteStore, web: TestClient) -> None:  # type: ignore[type-arg]
    one, two = await _app(store), await _app(store)
    items = json.dumps([{"text": "Towel", "done": True}])
    saved = await web.post(f"/a/{one.token}/state", data=json.dumps({"key": "items", "value": items}))
    assert saved.status == 200 and saved.headers["Access-Control-Allow-Origin"] == "*"
    reread = await web.get(f"/a/{one.token}/state")
    assert await reread.json() == {"items": items}  # a reload finds it
    assert await (await web.get(f"/a/{two.token}/state")).json() == {}  # another app does not
    full = await web.post(f"/a/{one.token}/state", data=json.dumps({"key": "big", "value": "x" * QUOTA}))
    assert full.status == 413
    for bad in ("not json", json.dumps({"key": 1, "value": "x"}), json.dumps({"key": "", "value": "x"})):
        assert (await web.post(f"/a/{one.token}/state", data=bad)).status == 400
    huge = await web.post(f"/a/{one.token}/state", data="x" * (QUOTA + 2048))
    assert huge.status == 413
    assert "Set-Cookie" not in reread.headers
