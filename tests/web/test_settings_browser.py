"""The settings page in headless Chromium: the real web server, the real core rows over a real
SQLite store, reached through a signed link as `/settings web` gives it. A person sees and changes
their settings with plain form buttons (no script: the CSP allows none, and nothing breaks it);
the hostile cases: the link opened by someone else (it acts for its person alone, whatever their
browser carries), a link after it expired (a clear page, nothing changed, even for a form opened
in time), a tampered token, and a POST from another site."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from aiohttp import web
from playwright.async_api import Browser, expect

from bot.core.chat.spoken import SpokenReplies
from bot.core.memory.controls import Controls
from bot.core.personas import PersonaPicker
from bot.core.proactive.commands import ProactiveCommands
from bot.core.settings import SettingParts, SettingsLinks, SettingsScreen, standard_rows
from bot.core.usage import UsageReport
from bot.store.sqlite.store import SqliteStore
from bot.web.server import WebServer, build_web_app
from bot.web.settings_page import SettingsPage
from tests.adapters.telegram.test_personas_e2e import Fixed
from tests.support.browser import VIEWPORT, Watched

ANN, BOB = "telegram:4242", "telegram:777"


@dataclass
class Site:
    store: SqliteStore
    links: SettingsLinks
    base_url: str
    now: list[datetime] = field(default_factory=lambda: [datetime.now(UTC)])

    def link(self, person: str = ANN) -> str:
        return f"{self.base_url}/s/{self.links.token(person, person)}"


@asynccontextmanager
async def settings_site(directory: Path) -> AsyncIterator[Site]:
    store = await SqliteStore.open(directory / "settings.db")
    now = [datetime.now(UTC)]
    links = SettingsLinks(b"browser-settings-key-0123456789ab", "http://127.0.0.1", clock=lambda: now[0])
    spoken = SpokenReplies(store.turns, None)
    parts = SettingParts(
        store,
        personas=PersonaPicker(Fixed(), store.personas),
        voice=spoken.command,
        proactive=ProactiveCommands(store.proactive).proactive,
        privacy=Controls(store, "You are Kindred.").privacy,
        usage=UsageReport(store.usage),
    )
    rows = standard_rows(parts)

    async def health() -> dict[str, object]:
        return {}

    page = SettingsPage(SettingsScreen(rows, links), links)
    server = WebServer(build_web_app(webhooks={}, health=health, settings=page))
    try:
        port = await server.start("127.0.0.1", 0)
        yield Site(store, links, f"http://127.0.0.1:{port}", now)
    finally:
        await server.stop()
        await store.close()


async def test_a_person_sees_and_changes_their_settings_with_no_script(
    browser: Browser, tmp_path: Path
) -> None:
    async with settings_site(tmp_path) as site:
        tab = await Watched.open(browser)
        response = await tab.page.goto(site.link())
        assert response is not None and response.status == 200
        headers = await response.all_headers()
        policy = dict(part.split(" ", 1) for part in headers["content-security-policy"].split("; "))
        training = tab.page.locator("fieldset", has_text="Training with your replies")
        await training.get_by_role("button", name="off").click()
        await expect(tab.page.get_by_role("status")).to_contain_text("Done: training is off for you.")
        await tab.page.locator("fieldset", has_text="Persona").get_by_role("button", name="coach").click()
        await expect(tab.page.get_by_role("status")).to_contain_text("Coach here.")
        await tab.page.locator("fieldset", has_text="Quiet hours").get_by_role("button", name="23–08").click()
        await expect(tab.page.get_by_role("status")).to_contain_text("Done: I stay quiet from 23:00 to 08:00")
        pressed = await tab.page.locator("button[aria-pressed=true]").all_inner_texts()
        scripts = await tab.page.locator("script").count()
        spoken = await tab.page.locator("fieldset", has_text="Spoken replies").inner_text()
        assert await site.store.learning.training_consent(ANN) is False
        assert await site.store.personas.chosen(ANN) == "coach"
        await tab.close()
    assert policy["default-src"] == "'none'" and policy["form-action"] == "'self'"
    assert policy["style-src"].startswith("'sha256-") and "script-src" not in policy
    assert policy["frame-ancestors"] == "'none'" and headers["referrer-policy"] == "same-origin"
    assert "set-cookie" not in headers and headers["cache-control"] == "no-store"
    assert pressed == ["coach", "off", "23–08", "off"]  # persona, check-ins, quiet hours, training
    assert scripts == 0 and "not available here" in spoken  # no voice configured: shown, not set
    assert tab.problems == []  # nothing the CSP refused: the page needs nothing it forbids


async def test_a_link_opened_by_someone_else_acts_for_its_person_alone(
    browser: Browser, tmp_path: Path
) -> None:
    async with settings_site(tmp_path) as site:
        bob = await browser.new_context(
            viewport=VIEWPORT, extra_http_headers={"X-Telegram-Init-Data": "user=%7B%22id%22%3A777%7D"}
        )
        await bob.add_cookies([{"name": "user", "value": BOB, "url": site.base_url}])
        tab = Watched.attach(await bob.new_page())
        await tab.page.goto(site.link(ANN) + f"?user={BOB}")
        await tab.page.locator("fieldset", has_text="Training").get_by_role("button", name="off").click()
        await expect(tab.page.get_by_role("status")).to_contain_text("Done: training is off for you.")
        await bob.close()
        assert await site.store.learning.training_consent(ANN) is False
        assert await site.store.learning.training_consent(BOB) is None


async def test_an_expired_link_is_refused_with_a_clear_page_even_for_a_form_opened_in_time(
    browser: Browser, tmp_path: Path
) -> None:
    async with settings_site(tmp_path) as site:
        tab = await Watched.open(browser)
        given = site.link()
        await tab.page.goto(given)
        site.now[0] += timedelta(minutes=15, seconds=1)
        await tab.page.locator("fieldset", has_text="Training").get_by_role("button", name="off").click()
        await expect(tab.page.get_by_role("heading")).to_have_text("This settings link has expired")
        old = await tab.page.goto(given)
        body = await tab.page.locator("body").inner_text()
        late = await tab.page.goto(site.link())
        assert await site.store.learning.training_consent(ANN) is None
        await tab.close()
    assert late is not None and late.status == 200  # a link given now works
    assert old is not None and old.status == 410 and "Send /settings web to me for a new link." in body


async def test_a_tampered_token_acts_for_nobody(browser: Browser, tmp_path: Path) -> None:
    async with settings_site(tmp_path) as site:
        ann = site.links.token(ANN, ANN)
        payload, signature = ann.split(".")
        bobs_payload = site.links.token(BOB, BOB).split(".")[0]
        flipped = ("A" if signature[5] != "A" else "B").join((signature[:5], signature[6:]))
        other_key = SettingsLinks(b"another-key-not-this-servers-0000", site.base_url).token(ANN, ANN)
        tab = await Watched.open(browser)
        statuses = []
        for token in (f"{bobs_payload}.{signature}", f"{payload}.{flipped}", other_key, "x" * 700, ann + "."):
            response = await tab.page.goto(f"{site.base_url}/s/{token}")
            assert response is not None
            statuses.append(response.status)
            await expect(tab.page.get_by_role("heading")).to_have_text("This settings link is not valid")
        await tab.close()
    assert statuses == [404] * 5


async def test_a_post_from_another_site_changes_nothing(browser: Browser, tmp_path: Path) -> None:
    async with settings_site(tmp_path) as site:
        target = site.link()

        async def hostile(request: web.Request) -> web.Response:
            form = (
                f'<form method="post" action="{target}"><input type="hidden" name="row" value="training">'
                '<button name="value" value="off">win a prize</button></form>'
            )
            return web.Response(text=f"<!doctype html><title>prize</title>{form}", content_type="text/html")

        other = web.Application()
        other.router.add_get("/", hostile)
        server = WebServer(other)
        port = await server.start("127.0.0.1", 0)
        try:
            tab = await Watched.open(browser)
            await tab.page.goto(f"http://localhost:{port}/")
            async with tab.page.expect_navigation() as navigation:
                await tab.page.get_by_role("button", name="win a prize").click()
            response = await navigation.value
            heading = await tab.page.get_by_role("heading").inner_text()
            await tab.close()
        finally:
            await server.stop()
        assert await site.store.learning.training_consent(ANN) is None
    assert response is not None and response.status == 403 and heading == "Not changed"
