"""/admin through aiohttp's test client: refused without the password, Kindred's figures with it."""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.core.errors import QueueUnavailable
from bot.core.learning.models import GLOBAL_SCOPE, NewAdapter
from bot.core.loading import LoadOnce
from bot.core.models import ChatMessage, Feedback, Generation, NewTurn
from bot.core.proactive.models import Claim, Delivery
from bot.inference.auto import AutoInference
from bot.store.sqlite.store import SqliteStore
from bot.web.admin import AdminPage
from bot.web.server import build_web_app
from bot.wiring.backends import replies_place
from tests.support.fakes import HashEmbedder, ScriptedInference

PASSWORD = "s3cret-admin-pw"
EMB = HashEmbedder()


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def turn(user: str, text: str, at: datetime, role: str = "user") -> NewTurn:
    return NewTurn(user, "c", role, text, EMB.vector(text), EMB.model_name, at)  # type: ignore[arg-type]


@pytest.fixture
async def store(store: SqliteStore) -> SqliteStore:
    """The shared empty store, with three days of ann's rated replies and one line from bob."""
    now = datetime.now(UTC)
    for back, value in ((2, -1.0), (1, 0.5), (0, 1.0)):
        at = now - timedelta(days=back)
        await store.turns.add_turn(turn("ann", f"hello {back}", at))
        reply = await store.turns.add_turn(turn("ann", f"reply {back}", at, role="assistant"))
        await store.turns.record_feedback(Feedback(reply.id, "ann", "👍", value, at))
    await store.turns.add_turn(turn("bob", "hi", now))
    return store


async def client_for(page: AdminPage) -> TestClient:  # type: ignore[type-arg]
    async def health() -> dict[str, object]:
        return {}

    client = TestClient(TestServer(build_web_app(webhooks={}, health=health, admin=page)))
    await client.start_server()
    return client


async def depths() -> dict[str, int]:
    return {"gpu": 3, "train": 0, "build": 1, "default": 7}


async def test_admin_is_refused_without_the_password(
    store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = await client_for(AdminPage(store, depths, PASSWORD))
    try:
        bearer, garbled = {"Authorization": f"Bearer {PASSWORD}"}, {"Authorization": "Basic %"}
        refused = ({}, basic("admin", "wrong"), bearer, garbled)
        for headers in refused:
            response = await client.get("/admin", headers=headers)
            assert response.status == 401
            assert response.headers["WWW-Authenticate"].startswith("Basic")
            assert "turns" not in await response.text()
    finally:
        await client.close()
    assert PASSWORD not in caplog.text


async def test_admin_shows_the_figures_chart_queues_and_flower(store: SqliteStore) -> None:
    page = AdminPage(store, depths, PASSWORD, flower_url="http://localhost:5555", days=7)
    client = await client_for(page)
    try:
        response = await client.get("/admin", headers=basic("anyone", PASSWORD))
        assert response.status == 200
        assert response.headers["Cache-Control"] == "no-store"
        html = await response.text()
    finally:
        await client.close()
    assert "<b>2</b><span>users</span>" in html
    assert "<b>7</b><span>turns</span>" in html
    assert "<b>3</b><span>reactions</span>" in html
    today = datetime.now(UTC).date()
    # today: 2 people wrote, 3 turns (each stored as a memory), 1 reaction of +1
    assert f"<tr><td>{today.isoformat()}</td><td>2</td><td>3</td><td>3</td><td>1</td><td>+1.00</td>" in html
    assert html.count("<circle") == 3 and "<polyline" in html and "<script" not in html
    assert "<tr><td>gpu</td><td>3</td></tr>" in html and "<tr><td>default</td><td>7</td></tr>" in html
    assert 'href="http://localhost:5555"' in html


async def test_admin_still_shows_figures_when_the_queue_is_unreachable(store: SqliteStore) -> None:
    async def unreachable() -> dict[str, int]:
        raise QueueUnavailable("redis down")

    client = await client_for(AdminPage(store, unreachable, PASSWORD))
    try:
        response = await client.get("/admin", headers=basic("admin", PASSWORD))
        html = await response.text()
    finally:
        await client.close()
    assert response.status == 200
    assert "The job queue cannot be reached." in html and "<b>7</b><span>turns</span>" in html


async def test_without_an_admin_page_there_is_no_admin_route() -> None:
    async def health() -> dict[str, object]:
        return {}

    client = TestClient(TestServer(build_web_app(webhooks={}, health=health)))
    await client.start_server()
    try:
        assert (await client.get("/admin")).status == 404
    finally:
        await client.close()


async def test_admin_shows_training_runs_and_the_reaction_rate_per_version(store: SqliteStore) -> None:
    """A succeeded run with its loss curve and gate report, a failed one whose message would be
    markup if it were not escaped, and the positive-reaction rate of the base and of v1."""
    now = datetime.now(UTC)
    adapter = await store.adapters.add_adapter(
        NewAdapter(GLOBAL_SCOPE, "tiny", "v1", now - timedelta(days=14), now)
    )
    for n, (version, value) in enumerate(((adapter.version, 1.0), (adapter.version, -1.0), (None, 1.0))):
        prompt = (ChatMessage("user", f"q{n}"),)
        reply = await store.turns.add_turn(
            NewTurn("ann", "c", "assistant", f"a{n}", EMB.vector(f"a{n}"), EMB.model_name, now,
                    generation=Generation(prompt, version, False))
        )  # fmt: skip
        await store.turns.record_feedback(Feedback(reply.id, "ann", "👍", value, now))
    good = await store.adapters.start_run("beat:1", now, timedelta(hours=1))
    assert good is not None
    for step, loss in enumerate((0.69, 0.52, 0.41), start=1):
        await store.adapters.log_run_step(good.id, {"step": step, "loss": loss, "kl": 0.01 * step}, now)
    checks = {
        "heldout_margin": {"value": 0.8, "bound": 0.0, "passed": True},
        "sycophancy": {"value": 0.1, "bound": 0.2, "passed": True},
    }
    gate = {"passed": True, "checks": checks}
    result = {"dataset": {"examples": {"desirable": 6, "undesirable": 5}}, "gate": gate}
    await store.adapters.finish_run(good.id, "succeeded", "v1 passed every check", now, result=result,
                           adapter_version=adapter.version)  # fmt: skip
    bad = await store.adapters.start_run("beat:2", now, timedelta(hours=1))
    assert bad is not None
    await store.adapters.finish_run(bad.id, "failed", "RuntimeError: <script>alert(1)</script>", now)

    client = await client_for(AdminPage(store, depths, PASSWORD))
    try:
        html = await (await client.get("/admin", headers=basic("admin", PASSWORD))).text()
    finally:
        await client.close()
    assert "<h2>Training runs</h2>" in html and "<script" not in html
    assert "RuntimeError: &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "6 + / 5 −" in html and f"<td>v{adapter.version}</td>" in html
    assert 'aria-label="loss from 0.69 to 0.41 over 3 steps"' in html
    assert "step 3, loss 0.41, kl 0.03" in html
    assert "✓ heldout_margin: 0.8 (bound 0)" in html and "✓ sycophancy: 0.1 (bound 0.2)" in html
    # v1: two rated replies, one positive; the base: ann's three rated replies and one more.
    assert f"<tr><td>v{adapter.version}</td><td>2</td><td>2</td><td>1</td><td>50%</td></tr>" in html
    assert "<tr><td>base model</td>" in html


async def test_admin_shows_each_proactive_triggers_success_rate(store: SqliteStore) -> None:
    now = datetime.now(UTC)
    for index, outcome in enumerate(("accepted", "accepted", "dismissed", None)):
        key = f"ann:habit:{index}"
        await store.proactive.claim(Claim(key, "ann", "habit", now))
        await store.proactive.settle(key, Delivery("sent", now, "c", index + 1, str(index)))
        if outcome is not None:
            await store.proactive.record_outcome(key, outcome, now)  # type: ignore[arg-type]
    client = await client_for(AdminPage(store, depths, PASSWORD, proactive=store.proactive))
    try:
        html = await (await client.get("/admin", headers=basic("admin", PASSWORD))).text()
    finally:
        await client.close()
    assert "Proactive check-ins (last 30 days)" in html
    assert "<tr><td>habit</td><td>4</td><td>2</td><td>1</td><td>50%</td></tr>" in html


async def test_admin_says_where_replies_come_from_now(store: SqliteStore) -> None:
    """The auto backend's choice, read on every request. Its question to Celery is a flag here;
    tests/workers/test_auto_inference.py asks real workers."""
    worker_there = False
    auto = AutoInference(ScriptedInference(), LoadOnce(ScriptedInference), lambda: worker_there, recheck_s=60)
    client = await client_for(AdminPage(store, depths, PASSWORD, replies=lambda: replies_place("auto", auto)))
    try:
        before = await (await client.get("/admin", headers=basic("admin", PASSWORD))).text()
        worker_there = True
        auto.refresh()
        after = await (await client.get("/admin", headers=basic("admin", PASSWORD))).text()
    finally:
        await client.close()
    assert "<p>Replies: auto: this process (local) for now</p>" in before
    assert "<p>Replies: auto: GPU workers (celery) for now</p>" in after
    assert replies_place("celery", ScriptedInference()) == "GPU workers (celery)"
    assert replies_place("local", ScriptedInference()) == "this process (local)"
