"""Every kind of mini-app in headless Chromium: built by the real build path, served by the real web
server on a loopback port, opened with no console error, its main control clicked to a visible
effect that (where the kind keeps state) survives a reload; screenshots light and dark kept.

Waits are Playwright's `expect`, which polls until its timeout: nothing here times anything.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import Browser, Page, expect

from bot.core.miniapps.kinds import KINDS
from bot.web.miniapps.tokens import BRAND, DARK, LIGHT
from tests.core.test_app_specs import REQUESTS
from tests.support.app_web import RENDERER, AppSite, app_site
from tests.support.browser import VIEWPORT, Watched, artefacts_dir, light_and_dark

# After the main control's effect: what a reload must still show (None: the kind keeps no state).
Persisted = Callable[[], Awaitable[None]] | None


def rgb(colour: str) -> str:
    return "rgb({}, {}, {})".format(*(int(colour[i : i + 2], 16) for i in (1, 3, 5)))


@pytest.fixture(scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AppSite]:
    async with app_site(tmp_path_factory.mktemp("apps-browser")) as opened:
        yield opened


@pytest.fixture
def tab(shared_tab: Watched) -> Watched:
    """The module's one page, its errors cleared: each test judges only what it did."""
    shared_tab.clear()
    return shared_tab


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artefacts_dir(tmp_path_factory.mktemp("screenshots"))


async def checklist(page: Page) -> Persisted:
    progress = page.locator("#progress")
    await expect(progress).to_have_text("0 of 8 done")
    await page.locator("[data-main]").click()
    await expect(progress).to_have_text("1 of 8 done")
    await expect(page.locator("#items li").first).to_have_class("done")

    async def persisted() -> None:
        await expect(progress).to_have_text("1 of 8 done")
        await expect(page.locator("[data-main]")).to_be_checked()

    return persisted


async def tracker(page: Page) -> Persisted:
    today = page.locator("#today")
    await expect(today).to_have_text("0")
    await page.locator("[data-main]").click()
    await expect(today).to_have_text("1")
    await expect(page.locator("#week li").first).to_have_text(f"{date.today().isoformat()}: 1 glasses")

    async def persisted() -> None:
        await expect(today).to_have_text("1")

    return persisted


async def ranking(page: Page) -> Persisted:
    highs = {"Seville": "31", "Athens": "35", "Phoenix": "41", "Dubai": "39", "Bangkok": "33", "Cairo": "37"}
    cities = page.locator("#rows tr td:first-child input")
    await expect(cities).to_have_count(len(highs))
    for row in range(len(highs)):
        city = await cities.nth(row).input_value()
        high = page.locator("#rows tr").nth(row).locator("input").nth(1)
        await high.fill(highs[city])
        await high.press("Tab")  # the cell keeps its value on `change`, as a person leaving it
    await page.locator("[data-main]").click()  # the last column's header: hottest first
    ordered = sorted(highs, key=lambda name: -int(highs[name]))

    async def in_order() -> None:
        await expect(cities.first).to_have_value(ordered[0])  # a reload's state arrives late
        assert await cities.evaluate_all("(inputs) => inputs.map((input) => input.value)") == ordered

    await in_order()
    return in_order


async def timer(page: Page) -> Persisted:
    clock, main = page.locator("#clock"), page.locator("[data-main]")
    await expect(clock).to_have_text("25:00")
    await main.click()
    await expect(main).to_have_text("Pause")
    await expect(clock).to_have_text(re.compile(r"^24:5\d$"))  # it ticks (a slow box may see two)
    await main.click()
    await expect(main).to_have_text("Start")
    return None


async def countdown(page: Page) -> Persisted:
    days = page.locator("#days")
    await expect(days).not_to_have_text("0")
    before = int(await days.inner_text())
    assert before <= 366
    await page.locator("#target").fill((date.today() + timedelta(days=400)).isoformat())
    await page.locator("[data-main]").click()
    # 399 whole days and a part of today remain, give or take a summer-time hour.
    await expect(days).to_have_text(re.compile(r"^(398|399|400)$"))

    async def persisted() -> None:
        await expect(days).to_have_text(re.compile(r"^(398|399|400)$"))

    return persisted


async def quiz(page: Page) -> Persisted:
    face = page.locator("#face")
    await expect(face).to_have_text("hello")
    await page.locator("[data-main]").click()
    await expect(face).to_have_text("hola")
    await expect(page.locator("[data-main]")).to_have_text("Show question")
    return None


async def converter(page: Page) -> Persisted:
    results = page.locator("#results li")
    await expect(results).to_have_text(["1 °C", "33.8 °F", "274.15 K"])
    # Set the amount with no input event: only the button can redraw the results.
    await page.locator("#amount").evaluate("(input) => { input.value = '100'; }")
    await expect(results.nth(1)).to_have_text("33.8 °F")
    await page.locator("[data-main]").click()
    await expect(results).to_have_text(["100 °C", "212 °F", "373.15 K"])
    return None


async def notes(page: Page) -> Persisted:
    line = "Sun on the balcony, and a long call with Mum"
    await page.locator("#entry").fill(line)
    await page.locator("[data-main]").click()
    entries = page.locator("#entries li")
    await expect(entries).to_have_count(1)
    await expect(entries.first).to_contain_text(line)
    await expect(page.locator("#entry")).to_have_value("")

    async def persisted() -> None:
        await expect(entries.first).to_contain_text(line)

    return persisted


EXERCISES: dict[str, Callable[[Page], Awaitable[Persisted]]] = {
    "checklist": checklist,
    "tracker": tracker,
    "ranking": ranking,
    "timer": timer,
    "countdown": countdown,
    "quiz": quiz,
    "converter": converter,
    "notes": notes,
}


def test_every_kind_has_an_exercise() -> None:
    assert set(EXERCISES) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
async def test_each_kind_renders_cleanly_and_its_main_control_works(
    kind: str, site: AppSite, tab: Watched, shots: Path
) -> None:
    built = await site.build(REQUESTS[kind])
    assert built.app.kind == kind and not built.cached
    version = await site.store.miniapps.get_version(built.app.id, built.app.version)
    assert version is not None and RENDERER.problems(version.body.rendered) == []  # what was stored
    page = tab.page
    response = await page.goto(site.url(built))
    assert response is not None and response.status == 200
    await expect(page.locator("h1")).to_have_text(built.app.title)
    await expect(page.locator("[data-main]")).to_have_count(1)
    fits = await page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert fits, f"{kind} is wider than a phone"
    persisted = await EXERCISES[kind](page)
    assert await page.locator("[data-main]").is_visible()
    await light_and_dark(page, shots, kind)
    if persisted is not None:
        await expect(page.locator("#saved")).to_have_text("Saved")  # the server has the state
        await page.reload()
        await persisted()
    assert tab.problems == [], tab.problems
    for scheme in ("light", "dark"):
        assert (shots / f"{kind}-{scheme}.png").stat().st_size > 1000


async def _colours(page: Page) -> dict[str, str]:
    return dict(
        await page.evaluate(
            """() => {
              const style = (node) => getComputedStyle(node);
              const button = [...document.querySelectorAll("button")]
                .find((b) => !b.classList.contains("quiet") && !b.closest("th"));
              return { surface: style(document.documentElement).backgroundColor,
                       text: style(document.documentElement).color,
                       card: style(document.querySelector(".card")).backgroundColor,
                       primary: style(button).backgroundColor, onPrimary: style(button).color };
            }"""
        )
    )


async def test_dark_mode_swaps_surfaces_and_text_and_keeps_the_primary(site: AppSite, tab: Watched) -> None:
    built = await site.build(REQUESTS["tracker"])
    page = tab.page
    await page.goto(site.url(built))
    await page.emulate_media(color_scheme="light")
    light = await _colours(page)
    await page.emulate_media(color_scheme="dark")
    dark = await _colours(page)
    await page.emulate_media(color_scheme="light")
    assert light["surface"] == rgb(LIGHT["surface-base"]) and dark["surface"] == rgb(DARK["surface-base"])
    assert light["text"] == rgb(LIGHT["text-base"]) and dark["text"] == rgb(DARK["text-base"])
    assert light["card"] == rgb(LIGHT["card-base"]) and dark["card"] == rgb(DARK["card-base"])
    for colours in (light, dark):
        assert colours["primary"] == rgb(BRAND["primary"])
        assert colours["onPrimary"] == rgb(BRAND["on-primary"])
    # "make it dark" is version 2, dark whatever the device prefers.
    darker = await site.build("make it dark", owner=built.app.owner)
    assert darker.app.id == built.app.id and darker.app.version == 2
    await page.goto(site.url(darker))
    assert (await _colours(page))["surface"] == rgb(DARK["surface-base"])
    assert tab.problems == []


async def test_telegram_theme_colours_are_honoured_and_hostile_ones_ignored(
    site: AppSite, tab: Watched
) -> None:
    built = await site.build(REQUESTS["checklist"])
    theme = {
        "bg_color": "#112233",
        "text_color": "#EEEEEE",
        "secondary_bg_color": "red; background: url(http://127.0.0.1:9/x)",
    }
    page = tab.page
    await page.goto(site.url(built) + "#tgWebAppThemeParams=" + quote(json.dumps(theme)))
    await expect(page.locator("html")).to_have_attribute("data-telegram", "yes")
    colours = await _colours(page)
    assert colours["surface"] == "rgb(17, 34, 51)" and colours["text"] == "rgb(238, 238, 238)"
    assert colours["card"] == rgb(LIGHT["card-base"])  # the hostile value was not a colour
    assert colours["primary"] == rgb(BRAND["primary"])
    assert tab.problems == []


def far_zone(now: datetime) -> str:
    """A time zone whose date differs from UTC's at `now`: a day keyed by UTC would be wrong there."""
    return "Pacific/Kiritimati" if now.hour >= 10 else "Pacific/Pago_Pago"  # UTC+14, UTC−11


async def test_days_are_the_persons_own_not_utcs(site: AppSite, browser: Browser) -> None:
    now = datetime.now(UTC)
    zone = far_zone(now)
    local_day = now.astimezone(ZoneInfo(zone)).date().isoformat()
    assert local_day != now.date().isoformat()
    context = await browser.new_context(viewport=VIEWPORT, timezone_id=zone)
    try:
        tab = Watched.attach(await context.new_page())
        await tab.page.goto(site.url(await site.build(REQUESTS["tracker"])))
        # Its button listens only once the saved state is read: a click before that counts nothing.
        await tab.page.locator("html[data-ready]").wait_for(state="attached")
        await tab.page.locator("[data-main]").click()
        await expect(tab.page.locator("#week li").first).to_have_text(f"{local_day}: 1 glasses")
        await tab.page.goto(site.url(await site.build(REQUESTS["notes"])))
        await tab.page.locator("html[data-ready]").wait_for(state="attached")
        await tab.page.locator("#entry").fill("A walk by the lagoon")
        await tab.page.locator("[data-main]").click()
        await expect(tab.page.locator("#entries li .chip")).to_have_text(local_day)
        assert tab.problems == []
    finally:
        await context.close()
