"""Telegram's initData on an app's state, through aiohttp's test client on a real SQLite store:
signed by the bot's token, fresh and from the owner, it reads and writes; tampered, signed by
another token, stale, unsigned or garbage, it gets a 401 that says why and nothing is stored; from
another Telegram person, a 403. The bot token appears in no answer and no log line.

The initData is signed here with Telegram's own algorithm, written out in `telegram_signed`
independently of the module under test, as Telegram's servers would sign it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, urlencode

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.core.miniapps.facts import Facts
from bot.core.miniapps.models import AppRecord, NewVersion
from bot.core.miniapps.specs import rule_spec
from bot.store.sqlite.store import SqliteStore
from bot.web.miniapps.hosting import INIT_DATA_HEADER, AppHosting, AppHostingOptions
from bot.web.miniapps.render import render_app
from bot.web.server import build_web_app
from bot.web.telegram_init import InitDataRefused, secret_key, verify_init_data

BOT_TOKEN = "123456:AAE-kindred-test-token-never-shown"
ANN = 4242
NOW = datetime.now(UTC)


def telegram_signed(fields: dict[str, str], bot_token: str = BOT_TOKEN) -> str:
    """initData as Telegram builds it: the fields, and their HMAC under the token's WebAppData key."""
    key = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    digest = hmac.new(key, check.encode(), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest}, quote_via=quote)


def fields_of(user_id: int = ANN, at: datetime = NOW) -> dict[str, str]:
    user = json.dumps({"id": user_id, "first_name": "Ann", "language_code": "en"}, separators=(",", ":"))
    return {"query_id": "AAHdF6IQAAAAAN0XohDhrOrc", "user": user, "auth_date": str(int(at.timestamp()))}


def test_a_telegram_signed_init_data_names_its_person() -> None:
    opener = verify_init_data(telegram_signed(fields_of()), secret_key(BOT_TOKEN), NOW)
    assert opener.user_id == ANN and opener.owner == f"telegram:{ANN}"


@pytest.mark.parametrize(
    ("init_data", "why"),
    [
        (telegram_signed(fields_of()).replace("Ann", "Bob"), "does not match"),  # a field changed
        (telegram_signed(fields_of(), "999:another-bot"), "does not match"),
        (telegram_signed(fields_of(at=NOW - timedelta(days=2))), "too old"),
        (telegram_signed(fields_of(at=NOW + timedelta(hours=1))), "too old"),
        (urlencode(fields_of()), "no hash"),
        ("%%%not=init=data&&", "not Telegram's"),
        ("", "not Telegram's"),
        ("x" * 5000, "not Telegram's"),
        (telegram_signed(fields_of()) + "&auth_date=1", "repeats"),
        (telegram_signed({"auth_date": str(int(NOW.timestamp()))}), "names no user"),
        (telegram_signed({**fields_of(), "auth_date": "soon"}), "auth_date"),
    ],
    # Named, not drawn from the values: those hold the clock, and every xdist worker must collect
    # the same test ids.
    ids=[
        "changed", "another-bot", "old", "future", "unsigned", "garbled", "empty", "huge", "repeated",
        "no-user", "bad-auth-date",
    ],
)  # fmt: skip
def test_init_data_that_is_not_telegrams_or_not_fresh_is_refused(init_data: str, why: str) -> None:
    with pytest.raises(InitDataRefused, match=why):
        verify_init_data(init_data, secret_key(BOT_TOKEN), NOW)


async def _app(store: SqliteStore, owner: str = f"telegram:{ANN}") -> AppRecord:
    spec = rule_spec("checklist", "a beach packing list", Facts(), NOW.date())
    version = NewVersion("checklist", spec["title"], spec, render_app("checklist", spec), "r", "k", "rules")
    return await store.miniapps.create_app(owner, owner, secrets.token_urlsafe(24), version, NOW)


async def _client(store: SqliteStore, key: bytes | None) -> TestClient:  # type: ignore[type-arg]
    async def health() -> dict[str, object]:
        return {}

    hosting = AppHosting(store.miniapps, AppHostingOptions(telegram_key=key))
    client = TestClient(TestServer(build_web_app(webhooks={}, health=health, apps=hosting)))
    await client.start_server()
    return client


@pytest.fixture
async def web(store: SqliteStore) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    client = await _client(store, secret_key(BOT_TOKEN))
    yield client
    await client.close()


def _saved(value: str) -> str:
    return json.dumps({"key": "done", "value": value})


async def test_the_owners_signed_init_data_reads_and_saves_state(
    store: SqliteStore,
    web: TestClient,  # type: ignore[type-arg]
) -> None:
    app = await _app(store)
    signed = {INIT_DATA_HEADER: telegram_signed(fields_of())}
    assert (await web.post(f"/a/{app.token}/state", data=_saved("[1]"), headers=signed)).status == 200
    read = await web.get(f"/a/{app.token}/state", headers=signed)
    assert read.status == 200 and await read.json() == {"done": "[1]"}
    preflight = await web.options(f"/a/{app.token}/state")
    assert INIT_DATA_HEADER in preflight.headers["Access-Control-Allow-Headers"]


@pytest.mark.parametrize(
    ("init_data", "status", "why"),
    [
        (telegram_signed(fields_of()).replace("Ann", "Bob"), 401, "signature"),  # a field changed
        (telegram_signed(fields_of(), "999:another-bot"), 401, "signature"),
        (telegram_signed(fields_of(at=NOW - timedelta(days=3))), 401, "too old"),
        (urlencode(fields_of()), 401, "no hash"),
        ("garbage\u00e9", 401, "not Telegram's"),
        (telegram_signed(fields_of(user_id=77)), 403, "someone else"),
    ],
)  # fmt: skip
async def test_other_init_data_gets_a_clear_refusal_and_nothing_is_stored(
    store: SqliteStore,
    web: TestClient,  # type: ignore[type-arg]
    caplog: pytest.LogCaptureFixture,
    init_data: str,
    status: int,
    why: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    app = await _app(store)
    assert (await web.post(f"/a/{app.token}/state", data=_saved("[0]"))).status == 200  # the link alone
    headers = {INIT_DATA_HEADER: init_data}
    wrote = await web.post(f"/a/{app.token}/state", data=_saved("[1, 2]"), headers=headers)
    read = await web.get(f"/a/{app.token}/state", headers=headers)
    for answer in (wrote, read):
        body = await answer.json()
        assert answer.status == status and body["ok"] is False and why in body["error"]
        assert BOT_TOKEN not in json.dumps(body) and BOT_TOKEN.split(":")[1] not in json.dumps(body)
    assert await store.miniapps.read_state(app.id) == {"done": "[0]"}
    assert BOT_TOKEN.split(":")[1] not in caplog.text


async def test_init_data_is_refused_where_no_telegram_bot_can_check_it(store: SqliteStore) -> None:
    client = await _client(store, None)
    try:
        app = await _app(store)
        headers = {INIT_DATA_HEADER: telegram_signed(fields_of())}
        answer = await client.post(f"/a/{app.token}/state", data=_saved("[1]"), headers=headers)
        assert answer.status == 401 and "no Telegram bot" in (await answer.json())["error"]
        assert await store.miniapps.read_state(app.id) == {}
    finally:
        await client.close()


def test_the_hosting_options_never_show_the_key() -> None:
    options = AppHostingOptions(telegram_key=secret_key(BOT_TOKEN))
    assert "telegram_key" not in repr(options) and BOT_TOKEN not in repr(options)
