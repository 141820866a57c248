"""XSS in headless Chromium: hostile text in the /app request and in every spec field a model can
write, built by the real build path and opened twice: as the server serves it (CSP, sandbox) and
as bare HTML with no CSP at all, so that the templates' escaping is judged on its own, not hidden
behind the CSP. Every payload would set `window.__pwned` or call a loopback canary; neither may
happen, no markup may appear, and the text must show as the text it is.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.async_api import Page

from bot.core.miniapps.kinds import SCHEMAS
from bot.core.miniapps.models import NewVersion
from tests.core.test_app_specs import REQUESTS
from tests.support.app_web import AppSite, BarePages, Canary, app_site, bare_pages, canary
from tests.support.browser import Watched
from tests.support.fakes import ScriptedInference

# What the page holds when nothing ran: the template's data block and script, its one sheet.
AUDIT = """() => ({
  pwned: window.__pwned ?? null,
  frames: window.frames.length,
  scripts: document.scripts.length,
  styles: document.querySelectorAll("style").length,
  foreign: [...document.querySelectorAll("img, svg, math, iframe, frame, object, embed, a, base, link, "
    + "meta[http-equiv], video, audio, form:not(.card)")].map((node) => node.tagName),
  handlers: [...document.querySelectorAll("*")].flatMap((node) =>
    [...node.attributes].filter((a) => a.name.startsWith("on")).map((a) => node.tagName + "." + a.name)),
  shown: [document.title, document.body.innerText,
    ...[...document.querySelectorAll("input, textarea")].flatMap((field) => [field.value, field.placeholder]),
    ...[...document.querySelectorAll("option")].map((option) => option.text)].join("\\n"),
})"""


def corpus(c: str) -> list[str]:
    """Payloads that would run (set __pwned) or load from the canary `c` if they became markup."""
    return [
        f"<script>__pwned=1;fetch('{c}/script')</script>",
        f'"><img src={c}/img onerror=__pwned=1>',
        "' autofocus onfocus='__pwned=1' x='",
        f"<svg onload=__pwned=1><image href={c}/svg /></svg>",
        "<a href=javascript:__pwned=1>javascript:__pwned=1</a>",
        f"</style><style>*{{background:url({c}/css)}}</style>",
        "</script><script>__pwned=1</script>",
        f"</sTyLe ><img src={c}/style>",
        "\u2028\u2029</ScRiPt ><script>__pwned=1</script><!--",
        "{{constructor.constructor('__pwned=1')()}} ${__pwned=1}",
        f"<iframe srcdoc='<script>parent.__pwned=1</script>' src={c}/frame>",
        f"<meta http-equiv=refresh content='0;url={c}/meta'>",
        f"<base href={c}/base/><link rel=stylesheet href=x.css>",
        f"<style>@import '{c}/import';</style>",
        "<!--<script>__pwned=1</script>-->]]>",
        "&lt;script&gt;__pwned=1&lt;/script&gt; &#60;b&#62;",
        f"<form action={c}/form><button autofocus>go</button></form>",
        "<body onload=__pwned=1><details open ontoggle=__pwned=1>",
    ]


def fitted(text: str, kind: str, *path: str) -> str:
    """`text` cut to the length the kind's schema allows at `path` (items, properties…)."""
    node: Any = SCHEMAS[kind]  # type: ignore[index]
    for step in path:
        node = node["items"] if step == "[]" else node["properties"][step]
    return text[: node["maxLength"]]


def cycle(values: list[str], start: int) -> Iterator[str]:
    while True:
        yield from values[start:] + values[:start]


def hostile_specs(payloads: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(kind, the model's answer) pairs that put every payload in every text field of every kind."""
    out: list[tuple[str, dict[str, Any]]] = [
        ("checklist", {"items": [{"text": fitted(p, "checklist", "items", "[]", "text")} for p in payloads]}),
        ("quiz", {"cards": [{"front": fitted(p, "quiz", "cards", "[]", "front"),
                             "back": fitted(q, "quiz", "cards", "[]", "back")}
                            for p, q in zip(payloads, cycle(payloads, 1), strict=False)]}),
    ]  # fmt: skip
    for first in range(0, len(payloads), 6):
        chunk = payloads[first : first + 6]
        columns = [fitted(p, "ranking", "columns", "[]") for p in chunk]
        rows = [[fitted(p, "ranking", "rows", "[]", "[]") for _ in columns] for p in payloads]
        out.append(("ranking", {"columns": columns, "rows": rows}))
    for first in range(0, len(payloads), 12):
        units = [{"name": fitted(p, "converter", "units", "[]", "name"), "factor": 1}
                 for p in payloads[first : first + 12]]  # fmt: skip
        if len(units) < 2:
            units.append({"name": "plain", "factor": 2})
        quantity = fitted(payloads[first], "converter", "quantity")
        out.append(("converter", {"quantity": quantity, "units": units}))
    # The kinds of one or two text fields take turns: each payload in two fields of one of them.
    singles = cycle(["tracker", "countdown", "notes"], 0)
    for p, q, kind in zip(payloads, cycle(payloads, 1), singles, strict=False):
        if kind == "tracker":
            out.append((kind, {"habit": fitted(p, kind, "habit"), "unit": fitted(q, kind, "unit")}))
        elif kind == "countdown":
            out.append((kind, {"label": fitted(p, kind, "label")}))
        else:
            out.append(
                (kind, {"prompt": fitted(p, kind, "prompt"), "placeholder": fitted(q, kind, "placeholder")})
            )
    return out


def shown_strings(kind: str, spec: dict[str, Any]) -> list[str]:
    """The spec's text that the kind's page shows straight after loading."""
    return [str(text) for text in _shown(kind, spec)]


def _shown(kind: str, spec: dict[str, Any]) -> list[Any]:
    match kind:
        case "checklist":
            return [item["text"] for item in spec["items"]]
        case "quiz":
            return [spec["cards"][0]["front"]]  # the others wait behind "Next"
        case "ranking":
            return [*spec["columns"], *(cell for row in spec["rows"] for cell in row)]
        case "converter":
            return [spec["quantity"]] + [unit["name"] for unit in spec["units"]]
        case "tracker":
            return [spec["habit"], spec["unit"]]
        case "countdown":
            return [spec["label"]]
        case "notes":
            return [spec["prompt"], spec["placeholder"]]
    raise AssertionError(kind)


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AppSite]:
    async with app_site(tmp_path_factory.mktemp("apps-xss")) as opened:
        yield opened


@pytest.fixture(scope="module")
async def trap() -> AsyncIterator[Canary]:
    async with canary() as opened:
        yield opened


@pytest.fixture(scope="module")
async def bare() -> AsyncIterator[BarePages]:
    async with bare_pages() as opened:
        yield opened


@dataclass
class Tab:
    watched: Watched
    bare: BarePages

    @property
    def problems(self) -> list[str]:
        return self.watched.problems


@pytest.fixture
def tab(shared_tab: Watched, bare: BarePages) -> Tab:
    shared_tab.clear()
    return Tab(shared_tab, bare)


async def audit(page: Page) -> dict[str, Any]:
    # `goto` waited for the load event (every image, frame and sheet a payload named was asked
    # for); `data-ready` is the kind's page drawn, its saved state read.
    await page.locator("html[data-ready]").wait_for(state="attached")
    return dict(await page.evaluate(AUDIT))


async def open_both_ways(tab: Tab, site: AppSite, token: str, html: str) -> list[dict[str, Any]]:
    """The app as served, then as bare HTML: what each page holds once it has settled."""
    page = tab.watched.page
    response = await page.goto(site.url(token))
    assert response is not None and response.status == 200
    served = await audit(page)
    await page.goto(tab.bare.add(html))
    return [served, await audit(page)]


def assert_inert(found: dict[str, Any], expected_text: list[str]) -> None:
    assert found["pwned"] is None
    assert found["frames"] == 0 and found["foreign"] == [] and found["handlers"] == []
    assert found["scripts"] == 2 and found["styles"] == 1  # the data block and the template's script
    shown = words(found["shown"])
    for text in expected_text:
        assert words(text) in shown, text


async def test_payloads_in_the_request_never_run_and_show_as_text(
    site: AppSite, trap: Canary, tab: Tab
) -> None:
    for payload in corpus(trap.base_url):
        built = await site.build(payload)
        version = await site.store.miniapps.get_version(built.app.id, built.app.version)
        assert version is not None
        for found in await open_both_ways(tab, site, built.app.token, version.body.rendered.html):
            assert_inert(found, [built.app.title])
            assert found["shown"].startswith(built.app.title), payload  # the <title>, as text
        assert tab.problems == [], (payload, tab.problems)
        assert trap.hits == [], payload


async def test_payloads_in_every_spec_field_never_run_and_show_as_text(
    site: AppSite, trap: Canary, tab: Tab
) -> None:
    # A model that answers with hostile JSON: the real model cannot be made to write these on cue.
    for kind, answer in hostile_specs(corpus(trap.base_url)):
        reply = json.dumps(answer, separators=(",", ":"))
        built = await site.build(REQUESTS[kind], inference=ScriptedInference(reply))
        assert built.app.kind == kind and built.source == "model", (kind, answer)
        version = await site.store.miniapps.get_version(built.app.id, built.app.version)
        assert version is not None
        expected = shown_strings(kind, dict(version.body.spec))
        for found in await open_both_ways(tab, site, built.app.token, version.body.rendered.html):
            assert_inert(found, expected)
        assert tab.problems == [], (kind, tab.problems)
        assert trap.hits == [], kind


async def test_the_checks_would_see_markup_that_got_in(site: AppSite, trap: Canary, tab: Tab) -> None:
    """The control: the same audit on a page with a payload spliced in raw must catch it, served
    (the CSP refuses it, loudly) and bare (it runs and calls the canary)."""
    built = await site.build(REQUESTS["checklist"])
    version = await site.store.miniapps.get_version(built.app.id, 1)
    assert version is not None
    spliced = version.body.rendered.html.replace(
        "<main", f'<img src="{trap.base_url}/control" onerror="window.__pwned=1"><main', 1
    )
    rendered = replace(version.body.rendered, html=spliced)
    forged = NewVersion("checklist", "forged", dict(version.body.spec), rendered, "forged", "forged", "rules")
    # Stored past the build's checks on purpose: no build would ever store it.
    token = secrets.token_urlsafe(24)
    app = await site.store.miniapps.create_app("control", "control", token, forged, datetime.now(UTC))
    served, bare = await open_both_ways(tab, site, app.token, spliced)
    assert served["pwned"] is None and served["foreign"] == ["IMG"] and served["handlers"] == ["IMG.onerror"]
    assert any("Content Security Policy" in problem for problem in tab.problems), tab.problems
    assert bare["pwned"] == 1
    assert trap.hits == ["GET /control"]
    trap.hits.clear()
