"""Pages a capable model might write for /app, good and bad, shared by the free-form tests, and
the capable model: the real OpenAI-compatible backend against the loopback server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.inference.openai_compat import OpenAICompatInference
from tests.inference.openai_server import FakeOpenAI


@asynccontextmanager
async def capable_model() -> AsyncIterator[tuple[FakeOpenAI, OpenAICompatInference]]:
    """The loopback server (set its `chunks` to the page it should write) and the backend on it."""
    server = await FakeOpenAI().start()
    inference = OpenAICompatInference(server.base_url, model=server.base_model, timeout_s=10.0)
    try:
        yield server, inference
    finally:
        await inference.close()
        await server.close()


# A small water tracker a capable model could write: its own markup, style and script, the
# tokens for every colour, state through K.save.
GOOD_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Water today</title>
<style>
.glasses { font-size: var(--step-3); color: var(--text); background: var(--mint);
  border-radius: var(--radius); }
.hint { color: var(--muted); }
</style>
</head>
<body>
<main class="app">
<h1 id="title"></h1>
<p class="glasses"><span id="count">0</span> glasses</p>
<button id="add" data-main="yes">Drank a glass</button>
<p class="hint" id="saved"></p>
</main>
<script>
K.ready((spec, state) => {
  let count = typeof state.count === "number" ? state.count : 0;
  const shown = document.getElementById("count");
  shown.textContent = String(count);
  document.getElementById("add").addEventListener("click", () => {
    count += 1;
    shown.textContent = String(count);
    K.save("count", count);
  });
});
</script>
</body>
</html>
"""
MARK = '<p class="glasses">'


def spliced(old: str, new: str) -> str:
    assert old in GOOD_PAGE
    return GOOD_PAGE.replace(old, new, 1)


# Each is refused by the free-form checks; the kind's template then draws the app.
BAD_PAGES = {
    "external script": spliced("</body>", '<script src="https://cdn.example/app.js"></script>\n</body>'),
    "inline handler": spliced('<button id="add"', '<button onclick="K.save(1, 1)" id="add"'),
    "raw colour": spliced("color: var(--text);", "color: #ff0000;"),
    "named colour in script": spliced("count += 1;", 'count += 1; shown.style.color = "red";'),
    "oversize": spliced("</main>", "<p>" + "water " * 50_000 + "</p>\n</main>"),
    "not html": "Sure! Here is a water tracker: press the button each time you drink a glass.",
    "markup sink": spliced("shown.textContent = String(count);", "shown.innerHTML = count;"),
    "network": spliced('K.save("count", count);', 'fetch("https://tracker.example/?n=" + count);'),
    "navigation": spliced("count += 1;", 'location.href = "https://elsewhere.example/";'),
    "a link set by reflection": spliced(
        "count += 1;", 'count += 1; const a = K.el("a", "x"); a["href"] = "/x";'
    ),
    "no body": "<!doctype html><html><p>water</p></html>",
    "style attribute": spliced('<p class="hint"', '<p style="font-weight: 700" class="hint"'),
    "meta refresh": spliced(
        "<title>", '<meta http-equiv="refresh" content="0;url=https://elsewhere.example/">\n<title>'
    ),
    "loads an image": spliced("</main>", '<img src="https://img.example/glass.png">\n</main>'),
}


def chunked(page: str, size: int = 4000) -> list[str]:
    """The page as the loopback server streams it: one chunk counts as one token."""
    return [page[i : i + size] for i in range(0, len(page), size)] or [""]
