"""The settings page's POST through aiohttp's test client on a real SQLite store: a change is
taken only when Origin names this server (or the links' own origin, behind a proxy) and the
browser does not say another site sent it; a form without a setting gets words; nothing the rows
say reaches the page unescaped."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.core.memory.controls import Controls
from bot.core.settings import Choice, RowView, SettingParts, SettingsLinks, SettingsScreen, standard_rows
from bot.store.sqlite.store import SqliteStore
from bot.web.server import build_web_app
from bot.web.settings_page import SettingsPage, row_form

ANN = "telegram:4242"
LINKS = SettingsLinks(b"k" * 32, "https://kindred.example")
Client = TestClient[web.Request, web.Application]


@pytest.fixture
async def client(store: SqliteStore) -> AsyncIterator[Client]:
    async def health() -> dict[str, object]:
        return {}

    rows = standard_rows(SettingParts(store, privacy=Controls(store, "P").privacy))
    page = SettingsPage(SettingsScreen(rows, LINKS), LINKS)
    client = TestClient(TestServer(build_web_app(webhooks={}, health=health, settings=page)))
    await client.start_server()
    yield client
    await client.close()


async def post(client: Client, headers: dict[str, str], data: dict[str, str] | None = None) -> int:
    path = f"/s/{LINKS.token(ANN, ANN)}"
    form = {"row": "training", "value": "off"} if data is None else data
    async with client.post(path, data=form, headers=headers) as response:
        return response.status


async def test_only_this_servers_own_page_may_post_a_change(client: Client, store: SqliteStore) -> None:
    own = f"http://{client.server.host}:{client.server.port}"
    refused = [
        {},  # no Origin at all
        {"Origin": "null"},  # an opaque origin: a sandboxed page, or a no-referrer policy
        {"Origin": "https://evil.example"},
        {"Origin": own, "Sec-Fetch-Site": "cross-site"},
        {"Origin": own, "Sec-Fetch-Site": "same-site"},
        {"Origin": f"ftp://{client.server.host}:{client.server.port}"},
    ]
    statuses = [await post(client, headers) for headers in refused]
    untouched = await store.learning.training_consent(ANN)
    proxied = await post(client, {"Origin": "https://kindred.example", "Sec-Fetch-Site": "same-origin"})
    assert statuses == [403] * len(refused) and untouched is None
    assert proxied == 200 and await store.learning.training_consent(ANN) is False
    assert await post(client, {"Origin": own}, {"row": "training", "value": "on"}) == 200
    assert await store.learning.training_consent(ANN) is True


async def test_a_form_without_a_setting_gets_words_and_changes_nothing(
    client: Client, store: SqliteStore
) -> None:
    own = {"Origin": f"http://{client.server.host}:{client.server.port}"}
    assert await post(client, own, {"value": "off"}) == 400
    path = f"/s/{LINKS.token(ANN, ANN)}"
    async with client.post(path, data={"row": "colour", "value": "blue"}, headers=own) as response:
        text = await response.text()
    assert "I have no setting called &#x27;colour&#x27;. There are: training." in text
    assert await store.learning.training_consent(ANN) is None


def test_what_a_row_says_is_escaped() -> None:
    row = RowView("k", "<b>name</b>", '"><script>x</script>', (Choice('"><i>', "<u>"),), None)
    html = row_form(row, '/s/a"b')
    assert "<script>" not in html and "<b>" not in html and "<u>" not in html and "<i>" not in html
    assert 'action="/s/a&quot;b"' in html
