"""/admin in headless Chromium, served by the real web server over a store with a week of turns
and reactions: refused without the password, drawn with no console error with it (its CSP lets
no script run, so one would show as an error), screenshot kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.async_api import Browser, Error, HttpCredentials, expect

from bot.core.models import Feedback, NewTurn
from bot.core.usage import UsageRecord
from tests.support.app_web import ADMIN_PASSWORD, AppSite, app_site, bare_pages
from tests.support.browser import VIEWPORT, Watched, artefacts_dir, screenshot
from tests.support.fakes import HashEmbedder
from tests.support.waiting import wait_until

EMB = HashEmbedder()


def turn(user: str, text: str, at: datetime, role: str = "user") -> NewTurn:
    return NewTurn(user, "c", role, text, EMB.vector(text), EMB.model_name, at)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AppSite]:
    async with app_site(tmp_path_factory.mktemp("admin-browser")) as opened:
        now = datetime.now(UTC)
        for back, value in ((6, -1.0), (5, 0.5), (3, 1.0), (2, 0.5), (1, 1.0), (0, 1.0)):
            at = now - timedelta(days=back)
            await opened.store.turns.add_turn(turn("ann", f"hello {back}", at))
            reply = await opened.store.turns.add_turn(turn("ann", f"reply {back}", at, role="assistant"))
            await opened.store.turns.record_feedback(Feedback(reply.id, "ann", "👍", value, at))
        await opened.store.turns.add_turn(turn("bob", "hi", now))
        for back in (0, 2, 3):
            use = UsageRecord("telegram:1", "reply", now - timedelta(days=back), 1200, 300, cost=0.002)
            await opened.store.usage.record(use)
        yield opened


async def test_admin_is_refused_in_the_browser_without_the_password(site: AppSite, browser: Browser) -> None:
    tab = await Watched.open(browser)
    statuses: list[int] = []
    tab.page.on("response", lambda response: statuses.append(response.status))
    try:
        await tab.page.goto(site.base_url + "/admin")
        shown = await tab.page.content()
    except Error as exc:  # Playwright answers the challenge with "no credentials": a failed load
        assert "ERR_INVALID_AUTH_CREDENTIALS" in str(exc)
        shown = ""
    assert statuses == [401]
    assert "turns" not in shown
    await tab.close()


async def test_admin_renders_with_no_console_error(
    site: AppSite, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    credentials: HttpCredentials = {"username": "admin", "password": ADMIN_PASSWORD}
    context = await browser.new_context(
        viewport={"width": 720, "height": VIEWPORT["height"]},
        http_credentials=credentials,
    )
    try:
        tab = Watched.attach(await context.new_page())
        response = await tab.page.goto(site.base_url + "/admin")
        assert response is not None and response.status == 200
        await expect(tab.page.locator("h1")).to_have_text("Kindred")
        cards = tab.page.locator(".card")
        await expect(cards).to_have_count(4)
        await expect(cards.nth(0)).to_contain_text("2users")  # ann and bob
        await expect(tab.page.locator("svg[aria-label='reward per day'] circle")).to_have_count(6)
        await expect(tab.page.get_by_text("build")).to_have_count(1)  # the queues table
        bars = tab.page.locator("svg[aria-label='tokens per day'] rect")
        await expect(bars).to_have_count(30)
        await expect(bars.last.locator("title")).to_contain_text("1,500 tokens")
        # What `kindred usage --json` prints for her today: 1,500 used of 5,000.
        row = tab.page.locator("table.usage tr", has_text="telegram:1")
        await expect(row).to_contain_text("1,200")
        await expect(row).to_contain_text("tokens today: 3,500")
        shots: Path = artefacts_dir(tmp_path_factory.mktemp("admin-screenshots"))
        path = await screenshot(tab.page, shots, "admin", full_page=True)
        assert path.stat().st_size > 1000
        assert tab.problems == [], tab.problems
    finally:
        await context.close()


async def test_another_site_cannot_frame_admin(site: AppSite, browser: Browser) -> None:
    """Signed in, a framed /admin could be clicked through by the page around it."""
    credentials: HttpCredentials = {"username": "admin", "password": ADMIN_PASSWORD}
    context = await browser.new_context(http_credentials=credentials)
    page = await context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text))
    try:
        async with bare_pages() as bare:
            await page.goto(bare.add(f'<!doctype html><iframe src="{site.base_url}/admin"></iframe>'))
            await expect(page.locator("iframe")).to_have_count(1)
            await wait_until(
                lambda: any("frame-ancestors" in e or "X-Frame-Options" in e for e in errors),
                what=f"the browser refusing to frame /admin (console: {errors})",
            )
            for frame in page.frames:
                assert "Kindred admin" not in await frame.content(), await frame.content()
    finally:
        await context.close()
