"""Secrets stay out of what Kindred shows: /admin, /healthz, a person's /export and an app page, served
by `kindred run`'s own composition with a Telegram token and an admin password set; and the
suite-wide scan (tests/support/secret_scan.py) fails a test whose captured output holds one."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr

from bot.adapters.telegram.secret import derived_webhook_secret
from bot.cli.run import serve
from bot.store.sqlite.store import SqliteStore
from bot.wiring.settings import DiscordSettings, GeneralSettings, TelegramSettings, WebSettings
from tests.adapters.telegram.conftest import ANN, replies_done
from tests.cli.test_backup import notes_app
from tests.cli.test_serve_both import served_settings
from tests.jobs.workerproc import free_port
from tests.support.telegram_api import FakeTelegramBotApi

ROOT = Path(__file__).resolve().parents[2]
ADMIN_PASSWORD = "admin-Pa55word-for-the-pages"
OPENAI_API_KEY = "sk-pages-key-never-shown-4242"


def shown_secrets(token: str) -> list[str]:
    return [token, token.split(":", 1)[1], derived_webhook_secret(token), ADMIN_PASSWORD, OPENAI_API_KEY]


async def test_admin_health_exports_and_app_pages_hold_no_secret(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    db, port = tmp_path / "kindred.db", free_port()
    async with FakeTelegramBotApi() as api:
        settings = served_settings(
            db,
            GeneralSettings(data_dir=shared_data),
            tiny_model,
            telegram=TelegramSettings(TELEGRAM_BOT_TOKEN=api.token, TELEGRAM_API_BASE_URL=api.base_url),
        )
        key = {"openai_api_key": SecretStr(OPENAI_API_KEY)}
        settings = settings.model_copy(update={
            "web": WebSettings(port=port, KINDRED_ADMIN_PASSWORD=SecretStr(ADMIN_PASSWORD)),
            "inference": settings.inference.model_copy(update=key),
            "discord": DiscordSettings(DISCORD_BOT_TOKEN=None),
        })  # fmt: skip
        stop = asyncio.Event()
        served = asyncio.create_task(serve(settings, stop=stop))
        pages: dict[str, str] = {}
        try:
            await api.wait_for_call("getUpdates", timeout=120)
            api.private_message(ANN, "remember that I like tea")
            await replies_done(api, ANN, 1, wait_s=60)
            api.private_message(ANN, "/export")
            await api.wait_until(lambda: len(api.documents) == 1, timeout=60)
            pages["/export"] = api.documents[0].data.decode("utf-8")
            pages.update(await fetched(f"http://127.0.0.1:{port}", await an_app(db)))
        finally:
            stop.set()
            assert await asyncio.wait_for(served, 60) == 0
    assert "I like tea" in pages["/export"] and "<html" in pages["/admin"].lower()
    assert "<p>Replies: this process (local)</p>" in pages["/admin"]  # kindred run wires the line in
    assert "sandbox" in pages["/a/"]  # the app's CSP header
    for name, page in pages.items():
        assert not [s for s in shown_secrets(api.token) if s in page], name


async def an_app(db: Path) -> str:
    store = await SqliteStore.open(db)
    try:
        app = await store.miniapps.create_app(
            f"telegram:{ANN}", "telegram", "s" * 32, notes_app(), datetime.now(UTC)
        )
    finally:
        await store.close()
    return app.token


async def fetched(base: str, app_token: str) -> dict[str, str]:
    """Each page as served, its headers included (a secret in a header is shown too)."""
    auth = {"Authorization": "Basic " + base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()}
    asks: dict[str, dict[str, str]] = {"/admin": auth, "/admin (refused)": {}, "/healthz": {}, "/a/": {}}
    found = {}
    async with aiohttp.ClientSession() as http:
        for name, given in asks.items():
            path = name.split(" ")[0] + (app_token if name == "/a/" else "")
            async with http.get(base + path, headers=given) as response:
                assert response.status == (401 if "refused" in name else 200), name
                found[name] = json.dumps(dict(response.headers)) + await response.text()
    return found


@pytest.mark.procs
def test_the_scan_fails_a_test_whose_log_holds_a_secret(tmp_path: Path) -> None:
    (tmp_path / "test_leaky.py").write_text(
        "import logging\n"
        "SERVICE_TOKEN = 'leaky-0123456789-token'\n"
        "def test_quiet():\n    logging.getLogger('x').warning('all is well')\n"
        "def test_leaky():\n    logging.getLogger('x').warning('token %s', SERVICE_TOKEN)\n"
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.support.secret_scan", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), str(tmp_path / "test_leaky.py")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out
    assert "1 failed, 1 passed" in out
    assert "test_leaky.py::test_leaky" in out and "test_leaky.SERVICE_TOKEN (in Captured log call)" in out
