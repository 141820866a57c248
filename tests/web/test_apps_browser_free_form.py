"""Free-form pages in headless Chromium, written by a capable model (the real OpenAI-compatible
backend against the loopback server) and built by the real build path: a page that passed the
checks renders with no console error, its main control works, and its state survives a reload,
also opened as Telegram opens it (signed initData in the launch fragment); an XSS corpus copied
into the model's page by the model never runs, whether the page passed or the template drew it.
"""

from __future__ import annotations

import html
import json
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.async_api import expect

from bot.inference.openai_compat import OpenAICompatInference
from bot.web.telegram_init import secret_key
from tests.inference.openai_server import FakeOpenAI
from tests.support.app_web import AppSite, Canary, app_site, canary
from tests.support.browser import Watched, artefacts_dir, screenshot
from tests.web.free_form_pages import GOOD_PAGE, MARK, capable_model, chunked
from tests.web.test_apps_browser_xss import corpus
from tests.web.test_telegram_init import ANN, BOT_TOKEN, fields_of, telegram_signed


@pytest.fixture(scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AppSite]:
    async with app_site(tmp_path_factory.mktemp("free-form"), telegram_key=secret_key(BOT_TOKEN)) as opened:
        yield opened


@pytest.fixture(scope="module")
async def capable() -> AsyncIterator[tuple[FakeOpenAI, OpenAICompatInference]]:
    async with capable_model() as both:
        yield both


@pytest.fixture(scope="module")
def server(capable: tuple[FakeOpenAI, OpenAICompatInference]) -> FakeOpenAI:
    return capable[0]


@pytest.fixture(scope="module")
def model(capable: tuple[FakeOpenAI, OpenAICompatInference]) -> OpenAICompatInference:
    return capable[1]


@pytest.fixture(scope="module")
async def trap() -> AsyncIterator[Canary]:
    async with canary() as opened:
        yield opened


@pytest.fixture
def tab(shared_tab: Watched) -> Watched:
    shared_tab.clear()
    return shared_tab


async def test_a_free_form_page_that_passed_renders_and_works_with_no_console_error(
    site: AppSite, server: FakeOpenAI, model: OpenAICompatInference, tab: Watched, tmp_path: Path
) -> None:
    server.chunks = chunked(GOOD_PAGE)
    built = await site.build("a water tracker for today", inference=model, free_form=True)
    assert built.source == "free-form"
    page = tab.page
    for opened in (site.url(built), site.url(built)):  # the second open is a reload: state kept
        response = await page.goto(opened)
        assert response is not None and response.status == 200
        await page.locator("html[data-ready]").wait_for(state="attached")
        before = int(await page.locator("#count").inner_text())
        await page.locator("[data-main]").click()
        await expect(page.locator("#count")).to_have_text(str(before + 1))
        await expect(page.locator("#saved")).to_have_text("Saved")
    assert before == 1  # the first open's glass, read back after the reload
    assert await page.locator("h1#title").inner_text() == built.app.title
    assert await page.evaluate("getComputedStyle(document.querySelector('.glasses')).borderRadius") == "12px"
    await screenshot(page, artefacts_dir(tmp_path), "free-form-water")
    assert tab.problems == [], tab.problems


async def test_payloads_the_model_copies_into_its_page_never_run(
    site: AppSite, server: FakeOpenAI, model: OpenAICompatInference, trap: Canary, tab: Watched
) -> None:
    for n, payload in enumerate(corpus(trap.base_url)):
        # A careless model copies the hostile request into its markup and its script's strings;
        # a careful one shows it as escaped text, and that page passes (a third of them: time).
        as_js = json.dumps(payload)[1:-1].replace("'", "\\'")
        careless = GOOD_PAGE.replace("</main>", f"<p>{payload}</p>\n</main>").replace(
            "count += 1;", f"count += 1; const note = '{as_js}';"
        )
        careful = GOOD_PAGE.replace("</main>", f'<p id="note">{html.escape(payload)}</p>\n</main>')
        for page, passes in ((careless, False), (careful, True))[: 2 if n % 3 == 0 else 1]:
            server.chunks = chunked(page)
            built = await site.build(f"a water tracker {payload}", inference=model, free_form=True)
            assert (built.source == "free-form") is passes, payload
            response = await tab.page.goto(site.url(built))
            assert response is not None and response.status == 200
            await tab.page.locator("html[data-ready]").wait_for(state="attached")
            await tab.page.locator("[data-main]").first.click()
            assert await tab.page.evaluate("window.__pwned ?? null") is None, payload
            if passes:
                assert await tab.page.locator("#note").text_content() == payload
            assert trap.hits == [], payload
            assert tab.problems == [], (payload, tab.problems)


async def test_inside_telegram_the_state_is_saved_only_with_the_owners_signed_init_data(
    site: AppSite, server: FakeOpenAI, model: OpenAICompatInference, tab: Watched
) -> None:
    """The runtime sends Telegram's initData from the launch fragment with each state request."""
    server.chunks = chunked(GOOD_PAGE)
    built = await site.build(
        "a water tracker for today", owner=f"telegram:{ANN}", inference=model, free_form=True
    )
    signed = telegram_signed(fields_of())
    launch = f"#tgWebAppData={quote(signed, safe='')}&tgWebAppVersion=8.0&tgWebAppPlatform=android"
    await tab.page.goto(site.url(built) + launch)
    await tab.page.locator("html[data-ready]").wait_for(state="attached")
    await tab.page.locator("[data-main]").click()
    await expect(tab.page.locator("#saved")).to_have_text("Saved")
    assert await site.store.miniapps.read_state(built.app.id) == {"count": "1"}
    assert tab.problems == [], tab.problems

    tampered = signed.replace("Ann", "Eve")
    await tab.page.goto("about:blank")
    await tab.page.goto(site.url(built) + f"#tgWebAppData={quote(tampered, safe='')}&tgWebAppVersion=8.0")
    await tab.page.locator("html[data-ready]").wait_for(state="attached")
    assert await tab.page.locator("#count").inner_text() == "0"  # reading was refused too
    await tab.page.locator("[data-main]").click()
    await expect(tab.page.locator("#saved")).to_have_text("Not saved: Telegram could not confirm it is you")
    assert await site.store.miniapps.read_state(built.app.id) == {"count": "1"}
    assert MARK in await tab.page.content()
    tab.clear()  # the browser logs the refused requests' 401s, as it should
