"""A capable model's own page for an app: asked for once the spec is settled, used only if it
passes the renderer's free-form checks; otherwise the kind's template draws the spec. Whatever
goes wrong here (a timeout, an error, prose instead of HTML) costs the page, never the build."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import Any

from bot.core.chat.ports import Inference
from bot.core.miniapps.model_pass import DATA_NOTE, request_message
from bot.core.models import ChatMessage

log = logging.getLogger(__name__)

MAX_PAGE_TOKENS = 6000
# Past this the model is not writing a small app; the rest is not read (the checks cap far lower).
MAX_PAGE_CHARS = 1 << 20
_START = re.compile(r"<!doctype html", re.IGNORECASE)
_END = re.compile(r"</html\s*>", re.IGNORECASE)
RULES = (
    "Write one complete HTML page for a small web app: <!doctype html>, <html>, <head>, <body>. "
    "Rules: it loads nothing (no src, href, link, img, font or URL of any kind); no inline event "
    "handler (onclick=…) and no style attribute: one <style> block in <head>, and one <script> "
    "block at the end of <body>; colours "
    "only as CSS variables: var(--primary), var(--on-primary), var(--surface), var(--card), "
    "var(--text), var(--muted), var(--line), var(--peach), var(--apricot), var(--mint), "
    "var(--seafoam), var(--lavender); corners var(--radius). The app's data is K.spec (the JSON "
    "below). Start with K.ready((spec, state) => { … }); keep what the person changes with "
    "K.save(key, value) (it comes back in `state`); make elements with K.el(tag, text, className). "
    "Show text only through textContent. Never use innerHTML, eval, fetch, timers with strings, "
    "location or window.open. Answer with the page only."
)


def _prompt(kind: str, request: str, spec: Mapping[str, Any]) -> list[ChatMessage]:
    return [ChatMessage("system", f"{RULES} {DATA_NOTE}"), request_message(kind, request, spec, "K.spec")]


def page_in(text: str) -> str | None:
    """The HTML document in the model's answer (it may wrap it in a fence or chatter), or None."""
    start = _START.search(text)
    ends = list(_END.finditer(text, start.start())) if start is not None else []
    if start is None or not ends:
        return None
    return text[start.start() : ends[-1].end()]


async def model_page(
    inference: Inference, kind: str, request: str, spec: Mapping[str, Any], timeout_s: float
) -> str | None:
    """The model's page for `spec`, unchecked, or None (then the template draws the app)."""
    chunks: list[str] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in inference.stream(_prompt(kind, request, spec), max_tokens=MAX_PAGE_TOKENS):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_PAGE_CHARS:
                    break
    except Exception as exc:  # a slow or failing model costs its page, never the app
        log.info("app page: the model's page was dropped (%s)", type(exc).__name__)
        return None
    page = page_in("".join(chunks))
    if page is None:
        log.info("app page: the model wrote no HTML page")
    return page
