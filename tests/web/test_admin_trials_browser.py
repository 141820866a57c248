"""/admin's variants and canary ([canary]) in headless Chromium, served by the real web server over
a store with replies of three variants, a running canary with the bounds of its test, and two
decided ones: the table with its intervals and the chart are drawn, with no console error (the
page's CSP runs no script), and what comes from the database is escaped and no secret is shown."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest
from playwright.async_api import Browser, HttpCredentials, expect

from bot.core.learning.models import NewCanary, Variant
from bot.core.models import Feedback, Generation
from bot.core.store import Store
from tests.store.test_learning_contract import prompt, reply
from tests.support.app_web import ADMIN_PASSWORD, AppSite, app_site
from tests.support.browser import VIEWPORT, Watched, artefacts_dir, screenshot

NOW = datetime.now(UTC)
HARMFUL_REASON = "upper bound −0.04 < 0 <script>alert(1)</script>"
POLICY_SECRET = "sk-policy-secret-never-shown"
CREDENTIALS: HttpCredentials = {"username": "admin", "password": ADMIN_PASSWORD}


def point(i: int, n: int) -> dict[str, object]:
    """The test's bounds narrowing around +0.3 as entries arrive, the lower one clearing 0 late."""
    half = 2.0 / (1 + i) ** 0.5
    return {"at": (NOW - timedelta(minutes=200 - i)).isoformat(), "estimate": 0.3, "lower": 0.3 - half,
            "upper": 0.3 + half, "n_canary": n, "n_serving": 3 * n, "mean_canary": 0.4,
            "mean_serving": 0.1}  # fmt: skip


async def seed(store: Store) -> None:
    trials = store.trials
    for adapter, status, reason in ((1, "harm", HARMFUL_REASON), (2, "expired", "undecided after 7 days")):
        old = await trials.start_canary(NewCanary("smol", Variant(adapter), Variant(), 0.2, 1, {}), NOW)
        assert old is not None
        history = [point(i, 5 * i) for i in range(1, 30)]
        await trials.enter(old.id, [], {}, history, before={})
        await trials.decide_canary(old.id, status, reason, NOW)  # type: ignore[arg-type]
    policy = {"alpha": 0.01, "days": 7, "webhook": POLICY_SECRET}
    canary = await trials.start_canary(NewCanary("smol", Variant(3, 1, 4), Variant(), 0.5, 7, policy), NOW)
    assert canary is not None
    replies: list[tuple[int | None, str, float | None]] = [
        (None, "serving", v) for v in (1.0, -1.0, -1.0, None, 1.0)
    ]
    replies += [(3, "canary", v) for v in (1.0, 1.0, 1.0, -1.0, None, 1.0)]
    replies += [(2, "serving", v) for v in (-1.0, None)]
    for i, (version, arm, value) in enumerate(replies):
        rm, n = (1, 4) if arm == "canary" else (None, 1)
        generation = Generation(prompt(f"q{i}"), version, False, base_model="smol", reward_model_version=rm,
                                n=n, arm=arm, canary_id=canary.id)  # type: ignore[arg-type]  # fmt: skip
        at = NOW + timedelta(seconds=i)
        new = dataclasses.replace(reply("ann", key=f"r{i}", at=at), generation=generation)
        turn = await store.turns.add_turn(new)
        if value is not None:
            await store.turns.record_feedback(Feedback(turn.id, "ann", "x", value, at))
    await trials.enter(canary.id, [], {}, [point(i, i) for i in range(1, 400)], before={})


@pytest.fixture(scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AppSite]:
    async with app_site(tmp_path_factory.mktemp("admin-trials")) as opened:
        await seed(opened.store)
        yield opened


async def test_the_variants_table_and_the_canary_chart_render(
    site: AppSite, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    context = await browser.new_context(
        viewport={"width": 1100, "height": VIEWPORT["height"]}, http_credentials=CREDENTIALS
    )
    try:
        tab = Watched.attach(await context.new_page())
        response = await tab.page.goto(site.base_url + "/admin")
        assert response is not None and response.status == 200
        rows = tab.page.locator("table.variants tr")
        await expect(rows).to_have_count(4)  # the header and three variants
        tuned = rows.filter(has_text="adapter v3 with reward model r1, best of 4")
        await expect(tuned.locator("td")).to_have_text(
            ["adapter v3 with reward model r1, best of 4", "smol", "canary", "6", "5",
             "80% [38%, 96%]", "20% [4%, 62%]", "+0.50 [-0.17, +1.17]"]
        )  # fmt: skip
        chart = tab.page.locator("svg.bounds[aria-label^='bounds over 240 points']")
        await expect(chart).to_be_visible()
        await expect(chart.locator("polygon")).to_have_count(1)
        await expect(chart.locator("polyline")).to_have_count(1)
        box = await chart.bounding_box()
        assert box is not None and box["width"] == 640 and box["height"] == 160
        arms = tab.page.locator("table.arms tr")
        await expect(arms.nth(1).locator("td").nth(2)).to_have_text("399")
        await expect(arms.nth(2).locator("td").nth(2)).to_have_text("1197")
        await expect(tab.page.locator("p.canary")).to_contain_text("answers 50% of replies on smol")
        decided = tab.page.locator("table.decided tr")
        await expect(decided).to_have_count(3)
        await expect(decided.nth(2)).to_contain_text(HARMFUL_REASON)  # shown as text, never run
        await expect(decided.locator("svg.bounds")).to_have_count(2)
        shots: Path = artefacts_dir(tmp_path_factory.mktemp("admin-trials-screenshots"))
        path = await screenshot(tab.page, shots, "admin-canary", full_page=True)
        assert path.stat().st_size > 1000
        assert tab.problems == [], tab.problems
    finally:
        await context.close()


async def test_what_the_store_holds_is_escaped_and_no_secret_is_shown(site: AppSite) -> None:
    auth = {"Authorization": "Basic " + base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()}
    async with aiohttp.ClientSession() as session, session.get(site.base_url + "/admin", headers=auth) as got:
        html = await got.text()
    assert got.status == 200 and "<script" not in html
    assert "upper bound −0.04 &lt; 0 &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert POLICY_SECRET not in html and ADMIN_PASSWORD not in html
    assert "one-sided 99% bounds" in html
