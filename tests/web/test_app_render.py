"""Rendering and judging mini-apps: the token sheet's contrast, escaping of spec text, and the
checks that refuse anything that could run or load what the template did not write."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import date
from html.parser import HTMLParser

import pytest

from bot.core.miniapps.facts import Facts
from bot.core.miniapps.kinds import KINDS
from bot.core.miniapps.models import Rendered
from bot.core.miniapps.specs import rule_spec
from bot.web.miniapps.check import MAX_APP_BYTES, check_app
from bot.web.miniapps.render import TemplateRenderer, csp_hash, render_app, spec_json, template_script_hashes
from bot.web.miniapps.tokens import ROLES
from tests.core.test_app_specs import REQUESTS
from tests.web.contrast import AA_TEXT, PRIMARY_PAIRS, TEXT_ON, contrast, theme_colours

RENDERER = TemplateRenderer()
XSS = (
    "</script><script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "<svg onload=alert(1)>",
    "javascript:alert(1)",
    "</style><style>body{background:url(https://evil.example/x)}</style>",
    "\u2028\u2029</ScRiPt ><!--",
    "{{constructor.constructor('alert(1)')()}}",
    "&lt;script&gt;",
)


def _spec(kind: str, title: str = "") -> dict[str, object]:
    spec = rule_spec(kind, REQUESTS[kind], Facts(), date(2026, 12, 1))  # type: ignore[arg-type]
    return {**spec, "title": title} if title else spec


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_colour_pair_the_templates_use_meets_wcag_aa(theme: str) -> None:
    colours = theme_colours(theme)
    pairs = [(fg, bg) for fg, bgs in TEXT_ON.items() for bg in bgs] + list(PRIMARY_PAIRS)
    for foreground, background in pairs:
        ratio = contrast(colours[foreground], colours[background])
        assert ratio >= AA_TEXT, f"{foreground} on {background} in {theme}: {ratio:.2f}"


def test_the_pairs_checked_are_the_pairs_the_stylesheet_uses() -> None:
    css = render_app("checklist", _spec("checklist")).html.split("<style>")[1].split("</style>")[0]
    base = css.split("/* end tokens */")[1]
    checked = {(fg, bg) for fg, bgs in TEXT_ON.items() for bg in bgs} | set(PRIMARY_PAIRS)
    for rule in re.findall(r"\{([^}]*)\}", base):
        fg = re.search(r"(?<![-\w])color:\s*var\(--([\w-]+)\)", rule)
        bg = re.search(r"background:\s*var\(--([\w-]+)\)", rule)
        if fg and bg:
            assert (fg[1], bg[1]) in checked, rule
        elif fg:  # text on whatever it sits on: the page or a card
            assert {(fg[1], "surface"), (fg[1], "card")} <= checked, rule


def test_dark_mode_changes_surfaces_and_text_and_keeps_the_primary() -> None:
    light, dark = theme_colours("light"), theme_colours("dark")
    assert light["primary"] == dark["primary"] == "#FF9AA2"
    assert all(light[role] != dark[role] for role in ROLES)
    assert contrast("#FFFFFF", light["primary"]) < AA_TEXT  # why the text on it is dark


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_renders_one_file_that_passes_the_checks(kind: str) -> None:
    rendered = RENDERER.render(kind, _spec(kind))
    assert RENDERER.problems(rendered) == []
    assert rendered.script_hashes == (csp_hash(_script(rendered.html)),)
    assert len(rendered.html.encode()) < MAX_APP_BYTES
    # the control a browser test clicks, in the markup or set by the script
    assert 'data-main="yes"' in rendered.html or 'dataset.main = "yes"' in rendered.html


@pytest.mark.parametrize("payload", XSS)
@pytest.mark.parametrize("kind", ["checklist", "ranking", "quiz"])
def test_hostile_spec_text_never_becomes_markup_or_script(kind: str, payload: str) -> None:
    spec = _spec(kind, payload[:60])
    if kind == "checklist":
        spec["items"] = [{"text": payload}]
    elif kind == "ranking":
        spec["rows"] = [[payload[:80], payload[:80]]]
    else:
        spec["cards"] = [{"front": payload, "back": payload}]
    rendered = RENDERER.render(kind, spec)
    assert RENDERER.problems(rendered) == []
    page = _Page(rendered.html)
    assert page.tags.count("script") == 2 and page.executable == [_script(rendered.html)]
    assert not any(name.startswith("on") for name in page.attributes)
    assert json.loads(page.data[0]) == spec  # the data block reads back as exactly the spec
    assert "<" not in page.data[0] and "\u2028" not in page.data[0]


def test_the_json_block_escapes_what_could_end_it() -> None:
    assert spec_json({"a": "</script>&\u2028"}) == '{"a":"\\u003c/script\\u003e\\u0026\\u2028"}'


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda h: h.replace("<main", '<main onclick="x()"'), "inline event handler"),
        (lambda h: h.replace("</body>", '<script src="https://cdn.example/x"></script></body>'), "external"),
        (lambda h: h.replace("</body>", "<script>alert(1)</script></body>"), "not a template's own"),
        (lambda h: h.replace("<main", '<main style="color:red"'), "style attribute"),
        (lambda h: h.replace("</body>", '<a href="javascript:alert(1)">x</a></body>'), "URL in href"),
        (lambda h: h.replace("</body>", '<iframe src="/admin"></iframe></body>'), "<iframe>"),
        (lambda h: h.replace("</body>", '<img src=x onerror="alert(1)"></body>'), "<img>"),
        (lambda h: h.replace("</body>", '<link rel="stylesheet" href="https://x"></body>'), "<link>"),
        (lambda h: h.replace("<!doctype html>", ""), "doctype"),
        (lambda h: h.replace("</script>\n</body>", ""), "unclosed"),
        (lambda h: h.replace('"theme":"auto"', '"theme":"<b>"'), "holds '<'"),
    ],
)
def test_the_checks_refuse_what_could_run_or_load(change: object, reason: str) -> None:
    rendered = render_app("checklist", _spec("checklist"))
    bad = replace(rendered, html=change(rendered.html))  # type: ignore[operator]
    assert any(reason in problem for problem in check_app(bad, allowed_scripts=template_script_hashes()))


def test_the_checks_refuse_raw_colours_outside_the_tokens_and_oversized_files() -> None:
    rendered = render_app("notes", _spec("notes"))
    style = rendered.html.split("<style>")[1].split("</style>")[0]
    for colour in ("#ff0000", "rgb(1, 2, 3)", "hotpink; color: red"):
        changed = style + f".x {{ color: {colour}; }}"
        bad = Rendered(rendered.html.replace(style, changed), rendered.script_hashes, (csp_hash(changed),))
        assert any("colour" in p for p in check_app(bad, allowed_scripts=template_script_hashes())), colour
    huge = replace(rendered, html=rendered.html + " " * MAX_APP_BYTES)
    assert check_app(huge, allowed_scripts=template_script_hashes()) == ["the app is larger than 256 KiB"]


def _script(page: str) -> str:
    return page.rsplit("<script>", 1)[1].split("</script>")[0]


class _Page(HTMLParser):
    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.executable: list[str] = []
        self.data: list[str] = []
        self._in: str | None = None
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]
        if tag == "script":
            self._in = "data" if dict(attrs).get("type") == "application/json" else "run"

    def handle_data(self, data: str) -> None:
        if self._in == "data":
            self.data.append(data)
        elif self._in == "run":
            self.executable.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in = None
