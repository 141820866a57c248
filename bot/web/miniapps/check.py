"""Whether a rendered mini-app may be served: the checks every version passes before it is stored.

- it parses: one document, every <script> and <style> closed;
- it stays under `MAX_APP_BYTES`;
- it loads nothing: no external script, stylesheet, frame, object, base or form target, and no
  `<meta http-equiv>` (a refresh would navigate away, which no CSP stops);
- no inline event handler, no `style` attribute, no URL but a same-page `#` link;
- no colour outside the token sheet (hex, rgb(), hsl(), named colours in CSS);
- the only script that runs is one of `allowed_scripts` (the templates' own, by CSP hash), and
  every data block is JSON that cannot close itself.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Collection
from html.parser import HTMLParser

from bot.core.miniapps.models import Rendered
from bot.web.miniapps.tokens import TOKENS_END, TOKENS_START

MAX_APP_BYTES = 256 * 1024
_LOADING_TAGS = frozenset({"iframe", "frame", "frameset", "object", "embed", "applet", "base", "link",
                           "portal", "img", "video", "audio", "source", "track", "svg", "math"})  # fmt: skip
_URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "srcdoc", "srcset", "poster", "data",
                             "xlink:href", "background", "ping", "manifest"})  # fmt: skip
_HEX = re.compile(r"#[0-9a-fA-F]{3,8}\b")
_COLOUR_FUNCTION = re.compile(r"\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(", re.IGNORECASE)
_NAMED = re.compile(
    r":[^;{}]*\b(?:white|black|red|green|blue|yellow|orange|purple|pink|gray|grey|brown|cyan|magenta|"
    r"navy|teal|silver|gold|maroon|lime|olive|aqua|fuchsia)\b",
    re.IGNORECASE,
)
_DATA_TYPES = frozenset({"application/json", "application/ld+json"})


def csp_hash(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


def is_running(script_type: str | None) -> bool:
    """Whether a <script> of this type runs (a data block does not)."""
    return not script_type or script_type.lower() in ("text/javascript", "module")


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.scripts: list[tuple[str | None, str]] = []
        self.styles: list[str] = []
        self.doctype = False
        self._open: tuple[str, str | None] | None = None  # (tag, script type) inside script/style
        self._text: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.doctype = self.doctype or decl.lower() == "doctype html"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _LOADING_TAGS:
            self.found.append(f"<{tag}> is not allowed: an app loads nothing")
        if tag == "meta" and any(name == "http-equiv" for name, _ in attrs):
            self.found.append("a <meta http-equiv> (it can refresh the page away or change its policy)")
        for name, value in attrs:
            self._attribute(tag, name, value or "")
        if tag in ("script", "style"):
            names = dict(attrs)
            if tag == "script" and "src" in names:
                self.found.append("an external script is not allowed")
            self._open, self._text = (tag, names.get("type")), []

    def _attribute(self, tag: str, name: str, value: str) -> None:
        if name.startswith("on"):
            self.found.append(f"inline event handler {name} on <{tag}>")
        elif name == "style":
            self.found.append(f"a style attribute on <{tag}>")
        elif name in _URL_ATTRIBUTES and not (name == "href" and value.startswith("#")):
            self.found.append(f"a URL in {name} on <{tag}>")
        elif "javascript:" in value.lower().replace(" ", ""):
            self.found.append(f"a javascript: URL in {name} on <{tag}>")

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open is not None and tag == self._open[0]:
            text = "".join(self._text)
            if tag == "script":
                self.scripts.append((self._open[1], text))
            else:
                self.styles.append(text)
            self._open = None


def inline_blocks(page: str) -> tuple[list[tuple[str | None, str]], list[str]]:
    """The page's <script> blocks as (type, text) and its <style> texts, in order."""
    reader = _Reader()
    reader.feed(page)
    reader.close()
    return reader.scripts, reader.styles


def check_app(rendered: Rendered, *, allowed_scripts: Collection[str]) -> list[str]:
    """Every reason `rendered` must not be served; empty when it may."""
    page = rendered.html
    if len(page.encode()) > MAX_APP_BYTES:
        return [f"the app is larger than {MAX_APP_BYTES // 1024} KiB"]
    reader = _Reader()
    try:
        reader.feed(page)
        reader.close()
    except Exception as exc:  # html.parser raises little, but a refusal must not be a crash
        return [f"the app does not parse: {exc}"]
    found = list(reader.found)
    if not reader.doctype:
        found.append("no <!doctype html>")
    if reader._open is not None:
        found.append(f"an unclosed <{reader._open[0]}>")
    found += _script_problems(reader.scripts, rendered, allowed_scripts)
    found += _style_problems(reader.styles, rendered)
    return found


def _script_problems(
    scripts: list[tuple[str | None, str]], rendered: Rendered, allowed: Collection[str]
) -> list[str]:
    found: list[str] = []
    running = [text for kind, text in scripts if is_running(kind)]
    for kind, text in scripts:
        if kind and kind.lower() in _DATA_TYPES:
            if "<" in text:
                found.append("a data block holds '<'")
            try:
                json.loads(text)
            except ValueError:
                found.append("a data block is not JSON")
        elif kind and kind.lower() not in ("text/javascript", "module"):
            found.append(f"a script of type {kind!r}")
    for text in running:
        digest = csp_hash(text)
        if digest not in allowed:
            found.append("a script that is not a template's own")
        if digest not in rendered.script_hashes:
            found.append("a script whose hash the CSP does not list")
        found += _colour_problems(text, "script", css=False)
    return found


def _style_problems(styles: list[str], rendered: Rendered) -> list[str]:
    found: list[str] = []
    for text in styles:
        if csp_hash(text) not in rendered.style_hashes:
            found.append("a style whose hash the CSP does not list")
        outside = text
        if TOKENS_START in text and TOKENS_END in text:
            start, end = text.index(TOKENS_START), text.index(TOKENS_END) + len(TOKENS_END)
            if text.count(TOKENS_START) != 1 or start > end:
                found.append("more than one token sheet")
            outside = text[:start] + text[end:]
        if "@import" in outside or "url(" in outside.lower():
            found.append("a style that loads something")
        found += _colour_problems(outside, "style", css=True)
    return found


def _colour_problems(text: str, where: str, *, css: bool) -> list[str]:
    found = []
    if _HEX.search(text):
        found.append(f"a raw hex colour in the {where}")
    if _COLOUR_FUNCTION.search(text):
        found.append(f"a raw colour function in the {where}")
    if css and _NAMED.search(text):
        found.append(f"a named colour in the {where}")
    return found
