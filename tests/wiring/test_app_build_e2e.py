"""/app end to end on the console: the real job registry on the in-process runner (no broker), a
real SQLite store, and the real web server answering the printed link.

The model is ScriptedInference: the build's model pass must survive a model that writes chatter
or broken JSON, which is what the bundled 135M model usually does, and a scripted reply makes that
case certain rather than likely.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.adapters.console import ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.loading import LoadOnce
from bot.core.miniapps.build import STEPS
from bot.core.miniapps.commands import AppCommands, DeliveryLog
from bot.core.models import NewMemory
from bot.core.store import Store
from bot.jobs.inprocess import InProcessJobs
from bot.web.miniapps.hosting import AppHosting
from bot.web.server import build_web_app
from bot.wiring.backends import open_store
from bot.wiring.jobs import job_registry
from bot.wiring.kindred import app_link
from bot.wiring.memory_jobs import Models
from bot.wiring.settings import GeneralSettings, Settings, WebSettings
from tests.support.fakes import HashEmbedder, ScriptedInference

USER = "console:ann"
BASE = "http://apps.test"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    web = WebSettings(KINDRED_APPS_URL=BASE)  # by its variable, as it is read
    return Settings(general=GeneralSettings(data_dir=tmp_path), web=web)


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[Store]:
    opened = await open_store(settings)
    yield opened
    await opened.close()


class Console:
    """The terminal chat with /app wired as `kindred chat` wires it, reading what it prints."""

    def __init__(self, settings: Settings, store: Store, model_reply: str) -> None:
        embedder, inference = HashEmbedder(), ScriptedInference(model_reply)
        self.jobs = InProcessJobs(
            job_registry(settings, Models(LoadOnce(lambda: embedder), LoadOnce(lambda: inference)))
        )
        self.out, self.err = io.StringIO(), io.StringIO()
        conversation = Conversation(store, embedder, inference, ConversationPolicy(persona="p"))
        deliveries = DeliveryLog(store.turns, embedder)
        apps = AppCommands(store.miniapps, self.jobs, app_link(settings), poll_s=0.02, deliveries=deliveries)
        self.chat = ConsoleChat(
            conversation, USER, ConsoleIO(lambda: "", self.out, self.err, False), apps=apps
        )

    async def say(self, line: str) -> str:
        start = len(self.out.getvalue())
        await self.chat.handle(line)
        return self.out.getvalue()[start:]


@pytest.fixture
async def console(settings: Settings, store: Store) -> AsyncIterator[Console]:
    made = Console(settings, store, 'Sure! {"items": "a list", "oops"')
    yield made
    await made.jobs.close()


@pytest.fixture
async def web(store: Store) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    async def health() -> dict[str, object]:
        return {}

    hosting = AppHosting(store.miniapps, rewards=store.rewards)
    client = TestClient(TestServer(build_web_app(webhooks={}, health=health, apps=hosting)))
    await client.start_server()
    yield client
    await client.close()


def link_in(text: str) -> str:
    found = re.search(re.escape(BASE) + r"(/a/[A-Za-z0-9_-]+)", text)
    assert found, text
    return found[1]


async def test_app_prints_progress_and_a_link_that_serves_the_app(
    console: Console,
    store: Store,
    web: TestClient,  # type: ignore[type-arg]
) -> None:
    vector = HashEmbedder().vector("my dog")
    await store.memories.add_memories(
        [NewMemory(USER, "My dog is called Rex", "ann", datetime.now(UTC), vector, "test/hash-bag-of-words")]
    )
    said = await console.say("/app a packing checklist for my beach trip")
    assert "is ready" in said and "Packing checklist for my beach trip" in said
    # A fast build passes steps between two polls: what shows is the first step, then later ones in order.
    shown = console.err.getvalue().splitlines()
    order = list(STEPS.values())
    assert shown[0] == STEPS["understanding"] and all(line in order for line in shown)
    assert [order.index(line) for line in shown] == sorted(order.index(line) for line in shown)
    path = link_in(said)
    assert len(path.removeprefix("/a/")) >= 22  # ≥ 128 bits of secret
    page = await web.get(path)
    assert page.status == 200 and "Content-Security-Policy" in page.headers
    body = await page.text()
    assert "Sunscreen" in body and "Rex" in body  # the beach preset and the person's dog


async def test_an_identical_request_comes_from_the_cache_in_under_a_second(console: Console) -> None:
    first = await console.say("/app rank this week's hottest cities")
    started = time.perf_counter()
    again = await console.say("/app rank this week's hottest cities")
    elapsed = time.perf_counter() - started
    assert "You already have this one" in again and link_in(again) == link_in(first)
    assert elapsed < 1.0, elapsed


async def test_follow_ups_make_versions_that_can_be_restored_and_links_revoked(
    console: Console,
    web: TestClient,  # type: ignore[type-arg]
) -> None:
    path = link_in(await console.say("/app rank this week's hottest cities"))
    wider = await console.say("/app add a column for price")
    assert "updated (version 2)" in wider and link_in(wider) == path
    assert "Price" in await (await web.get(path)).text()
    dark = await console.say("/app make it dark")
    assert "version 3" in dark and 'data-theme="dark"' in await (await web.get(path)).text()
    listed = await console.say("/apps")
    app_id = re.search(r"#(\d+) · ", listed)
    assert app_id and "version 3 of 3" in listed
    restored = await console.say(f"/apps restore {app_id[1]} 1")
    assert "now serves version 1" in restored
    page = await (await web.get(path)).text()
    assert "Price" not in page and 'data-theme="auto"' in page
    assert "no such app" in await console.say(f"/apps restore {app_id[1]} 9")
    assert "no longer opens" in await console.say(f"/apps revoke {app_id[1]}")
    assert (await web.get(path)).status == 404
    assert "link revoked" in await console.say("/apps")


async def test_a_build_that_cannot_be_made_says_why(console: Console) -> None:
    await console.say("/app a pomodoro timer")
    said = await console.say("/app add a column for price")
    assert "I can't do that to “Pomodoro timer”" in said
    assert "Tell me what you need" in await console.say("/app")
    # A bare "add …" that fits nothing in the last app (a timer) asks for a new one instead.
    assert "is ready" in await console.say("/app add up my weekly runs")


async def test_a_person_has_at_most_two_builds_at_once(console: Console, store: Store) -> None:
    for key in ("held-1", "held-2"):
        assert await store.miniapps.start_build(
            key, USER, datetime.now(UTC), limit=2, stale_after=_ten_minutes()
        )
    said = await console.say("/app a gratitude journal")
    assert "You already have 2 apps building" in said and "Type /app retry" in said
    assert await store.miniapps.list_apps(USER, 5) == []
    await store.miniapps.finish_build("held-1", "succeeded", "", datetime.now(UTC))
    said = await console.say("/app retry")  # the same request again
    assert "“Gratitude journal” is ready" in said and f"{BASE}/a/" in said
    assert "I no longer have it" in await console.say("/app retry")  # each retry once


async def test_a_build_that_cannot_be_made_offers_no_retry(console: Console) -> None:
    await console.say("/app a pomodoro timer")
    said = await console.say("/app add a column for price")
    assert "I can't do that" in said and "/app retry" not in said
    assert "I no longer have it" in await console.say("/app retry")


async def test_a_model_that_writes_a_valid_spec_is_used(settings: Settings, store: Store) -> None:
    made = Console(settings, store, '{"cards": [{"front": "cat", "back": "gato"}]}')
    try:
        said = await made.say("/app spanish flashcards")
    finally:
        await made.jobs.close()
    app = (await store.miniapps.list_apps(USER, 1))[0]
    version = await store.miniapps.get_version(app.id, 1)
    assert "is ready" in said and version is not None
    assert version.body.source == "model" and version.body.spec["cards"] == [{"front": "cat", "back": "gato"}]


def _ten_minutes() -> timedelta:
    return timedelta(minutes=10)


async def test_the_delivering_message_is_a_turn_and_opening_the_app_is_one_tool_use_of_it(
    console: Console,
    store: Store,
    web: TestClient,  # type: ignore[type-arg]
) -> None:
    said = await console.say("/app a gratitude journal")
    [turn] = await store.turns.recent_turns(USER, "console", 5)
    assert turn.role == "assistant" and turn.text == said.strip()
    for _ in range(3):  # opened again and again, the delivery counts once
        assert (await web.get(link_in(said))).status == 200
    record = await store.rewards.reply_record(turn.id, 5)
    assert record is not None and record.tool_uses == 1
    again = await console.say("/app a gratitude journal")  # a second delivery of the same app
    assert (await web.get(link_in(again))).status == 200
    turns = await store.turns.recent_turns(USER, "console", 5)
    assert len(turns) == 2 and turns[-1].text == again.strip()
    second = await store.rewards.reply_record(turns[-1].id, 5)
    assert second is not None and second.tool_uses == 1
    # Kept as replies: two memories, neither of them evidence about the person.
    assert (
        await store.memories.memory_count(USER) == 2
        and await store.memories.memory_count(USER, without_kinds=["reply"]) == 0
    )
