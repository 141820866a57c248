"""What an app can reach, asked of headless Chromium: the headers that wall it in, an opaque origin
with no storage or cookie, no read of /admin (even for a signed-in admin), no script, load or frame
but the template's own, no framing by another site, and no sight of another app's state.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, HttpCredentials, expect

from tests.core.test_app_specs import REQUESTS
from tests.support.app_web import ADMIN_PASSWORD, AppSite, app_site, bare_pages, canary
from tests.support.browser import VIEWPORT, Watched

# Each reach is tried in the page and answered "ok:<what it got>" or "refused:<error name>".
REACHES = """async () => {
  const attempt = async (reach) => {
    try { return "ok:" + String(await reach()); } catch (error) { return "refused:" + error.name; }
  };
  return {
    origin: window.origin,
    localStorage: await attempt(() => localStorage.getItem("admin-secret")),
    sessionStorage: await attempt(() => sessionStorage.length),
    cookie: await attempt(() => document.cookie),
    indexedDB: await attempt(() => indexedDB.open("kindred")),
    caches: await attempt(() => caches.keys()),
    admin: await attempt(() => fetch("/admin").then((response) => response.text())),
    adminWithCredentials: await attempt(() => fetch("/admin", { credentials: "include" })
      .then((response) => response.text())),
    adminOpaque: await attempt(() => fetch("/admin", { mode: "no-cors" })
      .then(async (response) => response.type + ":" + (await response.text()).length)),
  };
}"""


@pytest.fixture(scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AppSite]:
    async with app_site(tmp_path_factory.mktemp("apps-isolation")) as opened:
        yield opened


@pytest.fixture
async def admin_context(browser: Browser, site: AppSite) -> AsyncIterator[BrowserContext]:
    """A browser signed in to /admin, with its origin's storage and a cookie set: an admin who
    then opens an app link."""
    credentials: HttpCredentials = {"username": "admin", "password": ADMIN_PASSWORD, "origin": site.base_url}
    context = await browser.new_context(viewport=VIEWPORT, http_credentials=credentials)
    yield context
    await context.close()


async def watched(context: BrowserContext) -> Watched:
    return Watched.attach(await context.new_page())


async def test_an_app_answers_with_its_walls_and_runs_in_an_opaque_origin(
    site: AppSite, admin_context: BrowserContext
) -> None:
    admin = await watched(admin_context)
    response = await admin.page.goto(site.base_url + "/admin")
    assert response is not None and response.status == 200
    await admin.page.evaluate("""() => { localStorage.setItem("admin-secret", "s3cret");
                                         document.cookie = "admin=s3cret; path=/"; }""")
    assert await admin.page.evaluate("document.cookie") == "admin=s3cret"

    app = await watched(admin_context)
    built = await site.build(REQUESTS["checklist"])
    response = await app.page.goto(site.url(built))
    assert response is not None and response.status == 200
    headers = await response.all_headers()
    policy = dict(part.split(" ", 1) for part in headers["content-security-policy"].split("; "))
    assert policy["default-src"] == "'none'" and policy["sandbox"] == "allow-scripts allow-forms"
    assert policy["connect-src"] == site.base_url and policy["form-action"] == "'none'"
    assert policy["script-src"].startswith("'sha256-") and "unsafe" not in policy["script-src"]
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
    assert "set-cookie" not in headers
    await app.page.locator("html[data-ready]").wait_for(state="attached")

    reached: dict[str, Any] = await app.page.evaluate(REACHES)
    assert reached["origin"] == "null"  # opaque: no origin's storage is its own
    for store in ("localStorage", "sessionStorage", "cookie", "indexedDB", "caches"):
        assert reached[store].startswith("refused:"), (store, reached[store])
    assert reached["admin"] == "refused:TypeError"  # CORS: /admin never says an app may read it
    assert reached["adminWithCredentials"] == "refused:TypeError"
    assert reached["adminOpaque"] == "ok:opaque:0"  # a no-cors answer the page cannot open
    assert app.page_errors == []
    await admin.close()
    await app.close()


async def test_nothing_the_template_did_not_write_runs_loads_or_frames(
    site: AppSite, browser: Browser
) -> None:
    """Even script that got into an app's DOM (here by the test's own hand) is held by the CSP."""
    async with canary() as trap:
        built = await site.build(REQUESTS["quiz"])
        tab = await Watched.open(browser)
        await tab.page.goto(site.url(built))
        await tab.page.locator("html[data-ready]").wait_for(state="attached")
        tried = await tab.page.evaluate(
            """async (canary) => {
              const script = document.createElement("script");
              script.textContent = "window.__ran = 1";
              document.body.append(script);
              const image = new Image();
              const loaded = new Promise((done) => { image.onload = () => done("loaded");
                                                     image.onerror = () => done("refused"); });
              image.src = canary + "/image";
              const frame = document.createElement("iframe");
              frame.src = "/admin";
              document.body.append(frame);
              const fetched = await fetch(canary + "/fetch").then(() => "fetched", () => "refused");
              return { ran: window.__ran ?? null, image: await loaded, fetched };
            }""",
            trap.base_url,
        )
        assert tried == {"ran": None, "image": "refused", "fetched": "refused"}
        await expect(tab.page.locator("iframe")).to_have_count(1)
        for frame in tab.page.frames[1:]:  # read through the browser's own hands: the page has none
            assert "Kindred admin" not in await frame.content()
        refusals = " ".join(tab.console_errors)
        for directive in ("script-src", "img-src", "connect-src", "frame-src"):
            assert directive in refusals, (directive, tab.console_errors)
        assert trap.hits == []
        await tab.close()


async def test_another_site_cannot_frame_an_app(site: AppSite, browser: Browser) -> None:
    async with bare_pages() as bare:
        built = await site.build(REQUESTS["notes"])
        tab = await Watched.open(browser)
        await tab.page.goto(bare.add(f'<!doctype html><iframe src="{site.url(built)}"></iframe>'))
        await expect(tab.page.locator("iframe")).to_have_count(1)
        assert any("frame-ancestors" in error for error in tab.console_errors), tab.console_errors
        for frame in tab.page.frames:
            assert "Three things" not in await frame.content()
        await tab.close()


async def test_one_apps_state_is_its_own_and_survives_a_reload(site: AppSite, browser: Browser) -> None:
    one, two = await site.build(REQUESTS["checklist"]), await site.build(REQUESTS["checklist"])
    tab = await Watched.open(browser)
    page, progress = tab.page, tab.page.locator("#progress")
    await page.goto(site.url(one))
    await page.locator("[data-main]").click()
    await expect(page.locator("#saved")).to_have_text("Saved")
    await page.goto(site.url(two))
    await page.locator("html[data-ready]").wait_for(state="attached")
    await expect(progress).to_have_text("0 of 8 done")  # the same kind, the same origin: not its state
    await page.goto(site.url(one))
    await expect(progress).to_have_text("1 of 8 done")
    assert tab.problems == []
    await tab.close()


async def test_a_full_store_says_so_in_the_page(tmp_path: Path, browser: Browser) -> None:
    async with app_site(tmp_path, state_quota_bytes=4096) as small:
        built = await small.build(REQUESTS["notes"])
        tab = await Watched.open(browser)
        await tab.page.goto(small.url(built))
        saved = tab.page.locator("#saved")
        for n in range(3):  # 1.5 KB an entry: the third passes 4 KiB
            await tab.page.locator("#entry").fill(f"{n} " + "x" * 1500)
            await tab.page.locator("[data-main]").click()
            await expect(saved).to_have_text("Saved" if n < 2 else "Not saved: this app's storage is full")
        await tab.page.reload()
        await expect(tab.page.locator("#entries li")).to_have_count(2)  # what the server kept
        assert tab.page_errors == []  # the console has the 413 itself: that is the point
        await tab.close()
