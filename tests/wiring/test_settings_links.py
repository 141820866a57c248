"""/settings web's links as the composition root signs them: with a key derived from the web
secret the replicas already share (Telegram's webhook secret, set or derived from the token, else
Discord's token), on the web server's public address; none for a terminal alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.settings import LinkClaim
from bot.wiring.kindred import settings_links
from bot.wiring.settings import Settings, load_settings

TOKEN = "123456:telegram-test-token"


def settings_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **env: str) -> Settings:
    cleared = ("TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "DISCORD_BOT_TOKEN", "KINDRED_APPS_URL")
    for name in (*cleared, "KINDRED_WEB_HOST", "KINDRED_WEB_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return load_settings(env_file=None)


def test_a_link_from_one_replica_opens_on_another_and_names_its_person(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    one = settings_links(settings_with(monkeypatch, tmp_path, TELEGRAM_BOT_TOKEN=TOKEN))
    other = settings_links(settings_with(monkeypatch, tmp_path, TELEGRAM_BOT_TOKEN=TOKEN))
    assert one is not None and other is not None
    url = one.link("telegram:1", "telegram:1")
    assert url.startswith("http://127.0.0.1:8080/s/")
    claim = other.read(url.rsplit("/", 1)[1])
    assert isinstance(claim, LinkClaim) and claim.person == "telegram:1"


def test_each_secret_signs_its_own_links_and_a_terminal_alone_has_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    derived = settings_links(settings_with(monkeypatch, tmp_path, TELEGRAM_BOT_TOKEN=TOKEN))
    set_secret = settings_links(
        settings_with(
            monkeypatch, tmp_path, TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_WEBHOOK_SECRET="s3cret-x",
            KINDRED_APPS_URL="https://kindred.example/",
        )
    )  # fmt: skip
    discord = settings_links(settings_with(monkeypatch, tmp_path, DISCORD_BOT_TOKEN="discord-token"))
    assert derived and set_secret and discord
    token = derived.token("telegram:1", "telegram:1")
    assert set_secret.read(token) == "invalid" and discord.read(token) == "invalid"
    assert set_secret.link("a", "a").startswith("https://kindred.example/s/")
    assert settings_links(settings_with(monkeypatch, tmp_path)) is None
