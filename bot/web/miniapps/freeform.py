"""A page written whole by a capable model, made servable or refused.

The model's page gets what every app has: the token sheet and the house style first in <head>,
then, first in <body>, the spec as an escaped data block and the runtime (`K`: the spec, state,
Telegram's theme and initData). Its own blocks are hashed for the CSP. It is then judged by the
template's checks (`check_app`: it parses, size, loads nothing, no handler, style attribute or
URL, no colour outside the tokens) and by more, since its script is the model's, not ours:

- no sink that turns text into markup or code (innerHTML, document.write, eval, Function, import);
- no network or navigation of its own (fetch, XMLHttpRequest, WebSocket, sendBeacon, location,
  open): the CSP's connect-src would stop the first, but navigating itself would not be stopped;
- no storage API (an opaque origin has none) and no second token sheet;
- no named colour in a script's strings (hex and colour functions `check_app` already refuses);
- no code-like fragment of the request or the spec in a script: hostile text the model copied
  into code (`alert(1)`, `"><img`) is refused, not run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.core.miniapps.models import Rendered
from bot.web.miniapps.check import MAX_APP_BYTES, check_app, csp_hash, inline_blocks, is_running
from bot.web.miniapps.tokens import TOKENS_START

_HEAD = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
_BODY = re.compile(r"<body\b[^>]*>", re.IGNORECASE)
_SINKS = re.compile(
    # Markup inside a script: a browser's script parser treats `<!--` and `<script` specially (a
    # `</script>` after them may not end the script), so what html.parser saw is not what runs.
    r"<!--|<\s*/?\s*script|innerHTML|outerHTML|insertAdjacentHTML|createContextualFragment|DOMParser|srcdoc|document\s*\.\s*write"
    r"|\beval\b|\bFunction\s*\(|\bimport\s*\(|importScripts|\bset(?:Timeout|Interval)\s*\(\s*[\"'`]"
    r"|\bfetch\b|XMLHttpRequest|WebSocket|EventSource|sendBeacon|postMessage|\blocation\b|\bopen\s*\("
    r"|\bopener\b|window\s*\.\s*(?:top|parent|frames)|document\s*\.\s*cookie|javascript:"
    r"|localStorage|sessionStorage|indexedDB|caches\s*\.|serviceWorker"
    r"|(?:setAttribute\s*\(|\[)\s*[\"'`](?:on|href|src|action|formaction|srcdoc|style|innerHTML|outerHTML)"
    r"|\.(?:src|href|action|formAction)\s*=|createElement\s*\(\s*[\"'`](?!(?:div|span|p|li|ul|ol|h[1-6]|button"
    r"|input|label|table|thead|tbody|tr|td|th|section|strong|em|small|textarea|select|option)\b)",
    re.IGNORECASE,
)
_NAMED_IN_STRING = re.compile(
    r"[\"'`]\s*(?:white|black|red|green|blue|yellow|orange|purple|pink|gray|grey|brown|cyan|magenta|navy"
    r"|teal|silver|gold|maroon|lime|olive|aqua|fuchsia|transparent)\s*[\"'`]",
    re.IGNORECASE,
)
# What makes a word of the request code-like: a call, an assignment or a statement's end.
_CODE_LIKE = re.compile(r"[A-Za-z_$][\w$.]*\s*\(|[=;]|javascript:")
# Words split where markup and strings split them: `</script><script>x=1` holds the word `x=1`.
_FRAGMENT = re.compile(r"[^\s<>\"'`]{3,}")


def adopt(page: str, spec_block: str, style: str, runtime: str) -> Rendered | None:
    """The model's page with the house style, the spec and the runtime in it; None when it is not
    a whole HTML page (no <head> or <body>, or the body first)."""
    head, body = _HEAD.search(page), _BODY.search(page)
    if head is None or body is None or head.end() > body.start():
        return None
    data = f'<script type="application/json" id="kindred-spec">{spec_block}</script>'
    html = (
        page[: head.end()] + f"\n<style>{style}</style>" + page[head.end() : body.end()]
        + f"\n{data}\n<script>{runtime}</script>" + page[body.end() :]
    )  # fmt: skip
    try:
        scripts, styles = inline_blocks(html)
    except Exception:  # html.parser raises little, but a model's page must not crash a build
        return None
    return Rendered(
        html,
        tuple(dict.fromkeys(csp_hash(text) for kind, text in scripts if is_running(kind))),
        tuple(dict.fromkeys(csp_hash(text) for text in styles)),
    )


def check_free_form(
    rendered: Rendered, runtime: str, untrusted: Sequence[str], house_style: str
) -> list[str]:
    """Every reason the adopted page must not be served; empty when it may."""
    if len(rendered.html.encode()) > MAX_APP_BYTES:
        return [f"the app is larger than {MAX_APP_BYTES // 1024} KiB"]
    found = check_app(rendered, allowed_scripts=rendered.script_hashes)
    scripts, styles = inline_blocks(rendered.html)
    fragments = set(_fragments(untrusted))
    for kind, text in scripts:
        if not is_running(kind) or text == runtime:
            continue
        if (sink := _SINKS.search(text)) is not None:
            found.append(f"the model's script uses {sink.group(0)!r}")
        if _NAMED_IN_STRING.search(text):
            found.append("a named colour in the model's script")
        if any(fragment in text for fragment in fragments) or any(text.strip() in u for u in untrusted):
            found.append("the model's script holds code-like text from the request")
    if any(TOKENS_START in text for text in styles if text != house_style):
        found.append("a second token sheet")
    return found


def _fragments(texts: Iterable[str]) -> Iterable[str]:
    """The code-like words of untrusted text: what a script must not contain verbatim."""
    for text in texts:
        for fragment in _FRAGMENT.findall(text):
            if _CODE_LIKE.search(fragment):
                yield fragment


def spec_texts(spec: Mapping[str, Any] | Sequence[Any] | Any) -> list[str]:
    """Every string in the spec, keys and values."""
    if isinstance(spec, str):
        return [spec]
    if isinstance(spec, Mapping):
        return [*spec.keys(), *(text for value in spec.values() for text in spec_texts(value))]
    if isinstance(spec, list | tuple):
        return [text for value in spec for text in spec_texts(value)]
    return []
