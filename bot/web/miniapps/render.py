"""A mini-app as one self-contained HTML file: the kind's template, the token sheet, the spec.

Spec text reaches the page by two paths only, both escaped: the title, HTML-escaped into <title>
and <h1>; and the whole spec, as JSON in a data block that no browser runs, with `<`, `>`, `&`,
U+2028 and U+2029 written as JSON escapes so that no string can close the block or start markup.
The page's one script is the kind's template code, byte for byte, so its CSP hash is known before
any spec exists (`template_script_hashes`). A capable model's own page (free-form) is made into an
app by `TemplateRenderer.free_form`, judged by `freeform.py`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from bot.core.miniapps.kinds import KINDS
from bot.core.miniapps.models import Rendered
from bot.web.miniapps.check import check_app
from bot.web.miniapps.check import csp_hash as csp_hash
from bot.web.miniapps.freeform import adopt, check_free_form, spec_texts
from bot.web.miniapps.tokens import token_css

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_THEMES = ("auto", "light", "dark")
SHELL = """<!doctype html>
<html lang="en" data-theme="{theme}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<main class="app">
<h1 id="title">{title}</h1>
{body}
</main>
<script type="application/json" id="kindred-spec">{spec}</script>
<script>{script}</script>
</body>
</html>
"""


def _template(name: str) -> str:
    return resources.files("bot.web.miniapps").joinpath("templates", name).read_text(encoding="utf-8")


@cache
def _style() -> str:
    return token_css() + _template("base.css")


@cache
def _runtime() -> str:
    return _template("runtime.js")


@cache
def kind_script(kind: str) -> str:
    """The one script of every app of `kind`: the runtime, then the kind's code."""
    if kind not in KINDS:
        raise ValueError(f"no template for the app kind {kind!r}")
    return _runtime() + _template(f"{kind}.js")


@cache
def template_script_hashes() -> frozenset[str]:
    return frozenset(csp_hash(kind_script(kind)) for kind in KINDS)


def spec_json(spec: Mapping[str, Any]) -> str:
    """The spec as JSON safe inside <script type="application/json">."""
    text = json.dumps(spec, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def render_app(kind: str, spec: Mapping[str, Any]) -> Rendered:
    script, style = kind_script(kind), _style()
    theme = spec.get("theme")
    page = SHELL.format(
        theme=theme if theme in _THEMES else "auto",
        title=html.escape(str(spec.get("title", "")), quote=True),
        style=style,
        body=_template(f"{kind}.html"),
        spec=spec_json(spec),
        script=script,
    )
    return Rendered(page, (csp_hash(script),), (csp_hash(style),))


class TemplateRenderer:
    """The AppRenderer of the templates shipped in bot/web/miniapps/templates."""

    def render(self, kind: str, spec: Mapping[str, Any]) -> Rendered:
        return render_app(kind, spec)

    def problems(self, rendered: Rendered) -> list[str]:
        return check_app(rendered, allowed_scripts=template_script_hashes())

    def free_form(
        self, spec: Mapping[str, Any], page: str, untrusted: Sequence[str]
    ) -> tuple[Rendered | None, list[str]]:
        """A model's whole page with the house style, the spec and the runtime added, and why it
        must not be served (`untrusted`: the request's text; the spec's own strings count too)."""
        rendered = adopt(page, spec_json(spec), _style(), _runtime())
        if rendered is None:
            return None, ["not a whole HTML page (no <head> and <body>)"]
        return rendered, check_free_form(rendered, _runtime(), [*untrusted, *spec_texts(spec)], _style())
