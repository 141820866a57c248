"""Free-form pages from a capable model, through the real OpenAI-compatible backend against the
loopback server and the real build path on a real SQLite store: a page that passes the checks is
served as the model wrote it (with the spec and runtime added, every block CSP-hashed); each page
that fails (an external script, an inline handler, a raw colour, too big, not HTML at all, …) is
dropped and the kind's template draws the app; the build succeeds either way."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from bot.core.miniapps.build import BuildPolicy, BuildRequest, Built, build_app
from bot.inference.openai_compat import OpenAICompatInference
from bot.store.sqlite.store import SqliteStore
from bot.web.miniapps.render import TemplateRenderer, csp_hash, template_script_hashes
from bot.wiring.miniapp_jobs import build_policy
from bot.wiring.settings import WebSettings
from tests.inference.openai_server import FakeOpenAI
from tests.web.free_form_pages import BAD_PAGES, GOOD_PAGE, MARK, capable_model, chunked

RENDERER = TemplateRenderer()
FREE_FORM = BuildPolicy(free_form=True, free_form_timeout_s=10.0, model_timeout_s=10.0)
REQUEST = "a water tracker for today"


@pytest.fixture
async def capable() -> AsyncIterator[tuple[FakeOpenAI, OpenAICompatInference]]:
    async with capable_model() as both:
        yield both


@pytest.fixture
def server(capable: tuple[FakeOpenAI, OpenAICompatInference]) -> FakeOpenAI:
    return capable[0]


@pytest.fixture
def model(capable: tuple[FakeOpenAI, OpenAICompatInference]) -> OpenAICompatInference:
    return capable[1]


async def _build(store: SqliteStore, model: OpenAICompatInference, text: str = REQUEST) -> Built:
    owner = f"telegram:{secrets.randbelow(10**9)}"
    request = BuildRequest(secrets.token_hex(8), owner, owner, text)
    return await build_app(
        store.miniapps, RENDERER, request, [], datetime.now(UTC), policy=FREE_FORM, inference=model
    )


async def test_a_page_that_passes_is_served_as_the_model_wrote_it(
    store: SqliteStore, server: FakeOpenAI, model: OpenAICompatInference
) -> None:
    server.chunks = chunked(GOOD_PAGE)
    built = await _build(store, model)
    version = await store.miniapps.get_version(built.app.id, built.app.version)
    assert version is not None and built.source == version.body.source == "free-form"
    rendered = version.body.rendered
    assert MARK in rendered.html and 'id="kindred-spec"' in rendered.html
    assert not set(rendered.script_hashes) & template_script_hashes()  # the model's script, not a template's
    assert len(rendered.script_hashes) == 2 and len(rendered.style_hashes) == 2  # the runtime's and its own
    assert RENDERER.free_form(dict(version.body.spec), GOOD_PAGE, [REQUEST])[1] == []
    asked = server.requests[-1]
    assert asked["max_tokens"] >= len(server.chunks) and "K.save" in asked["messages"][0]["content"]


@pytest.mark.parametrize("flaw", sorted(BAD_PAGES))
async def test_a_page_that_fails_the_checks_falls_back_to_the_template(
    store: SqliteStore, server: FakeOpenAI, model: OpenAICompatInference, flaw: str
) -> None:
    server.chunks = chunked(BAD_PAGES[flaw])
    _, found = RENDERER.free_form({"title": "Water"}, BAD_PAGES[flaw], [REQUEST])
    assert found, flaw  # the checks name why
    built = await _build(store, model)
    version = await store.miniapps.get_version(built.app.id, built.app.version)
    assert version is not None and built.source == "rules" and built.app.kind == "tracker"
    assert MARK not in version.body.rendered.html
    assert set(version.body.rendered.script_hashes) <= template_script_hashes()
    assert RENDERER.problems(version.body.rendered) == []


async def test_a_model_that_fails_or_stalls_leaves_the_template(
    store: SqliteStore, server: FakeOpenAI, model: OpenAICompatInference
) -> None:
    server.chunks = chunked(GOOD_PAGE)
    server.fail_next("500")  # the spec pass
    server.fail_next("500")  # the page
    built = await _build(store, model)
    assert built.source == "rules"


async def test_text_from_the_request_copied_into_the_models_script_is_refused(
    server: FakeOpenAI,
) -> None:
    request = "a tracker for water');alert(document.domain);('"
    page = GOOD_PAGE.replace("count += 1;", "count += 1; let note = 'water');alert(document.domain);('';")
    _, found = RENDERER.free_form({"title": "Water"}, page, [request])
    assert "the model's script holds code-like text from the request" in found
    # The same words in the request but not in code: the page passes.
    assert RENDERER.free_form({"title": "Water"}, GOOD_PAGE, [request])[1] == []


def test_the_page_gets_the_spec_and_runtime_and_every_block_is_hashed() -> None:
    adopted, found = RENDERER.free_form({"title": "Water", "theme": "dark"}, GOOD_PAGE, [REQUEST])
    assert adopted is not None and found == []
    head, body = adopted.html.index("<head>"), adopted.html.index("<body>")
    assert adopted.html.index("/* tokens */") > head and adopted.html.index('id="kindred-spec"') > body
    script = GOOD_PAGE.split("<script>\n", 1)[1].split("</script>", 1)[0]
    assert csp_hash(f"\n{script}") in adopted.script_hashes  # the model's script, as it wrote it


@pytest.mark.parametrize(
    ("setting", "backend", "on"),
    [("auto", "openai", True), ("auto", "local", False), ("auto", "celery", False),
     ("on", "local", True), ("off", "openai", False)],
)  # fmt: skip
def test_free_form_is_on_for_the_openai_backend_unless_set(setting: str, backend: str, on: bool) -> None:
    web = WebSettings(KINDRED_APP_FREE_FORM=setting)  # type: ignore[call-arg]
    assert build_policy(web, 60.0, backend).free_form is on
