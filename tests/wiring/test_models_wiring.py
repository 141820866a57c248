"""The models list through the composition root, against two loopback OpenAI-compatible servers:
`kindred chat` answers with the configured model, `/model other` switches and the next reply
comes from the other server with the key its variable holds; a models file with a syntax error
stops the start before anything opens, naming the line; a listed model whose key variable is
unset fails its reply only, saying which variable, never a key."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.console import ConsoleIO
from bot.core.errors import ConfigError
from bot.wiring.kindred import Kindred, build
from bot.wiring.platforms import console_chat
from bot.wiring.settings import Settings, load_settings
from tests.inference.openai_server import FakeOpenAI

OTHER_KEY = "sk-other-model-secret-77"


@pytest.fixture
async def servers() -> AsyncIterator[tuple[FakeOpenAI, FakeOpenAI]]:
    chat = await FakeOpenAI(chunks=["Configured", " here."], base_model="served-chat").start()
    other = await FakeOpenAI(chunks=["Other", " here."], base_model="other-model").start()
    yield chat, other
    await other.close()
    await chat.close()


def models_toml(chat: FakeOpenAI, other: FakeOpenAI, key_env: str = "OTHER_KEY") -> str:
    return f"""
currency = "EUR"

[[model]]
name = "configured"
backend = "openai"
url = "{chat.base_url}/v1"
model = "served-chat"

[[model]]
name = "other"
backend = "openai"
url = "{other.base_url}/v1"
model = "other-model"
api_key_env = "{key_env}"
context = 4096
price_in = 1.0
price_out = 2.0
"""


def settings_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chat: FakeOpenAI) -> Settings:
    env = {
        "KINDRED_DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'kindred.db'}",
        "KINDRED_INFERENCE_BACKEND": "openai",
        "KINDRED_OPENAI_BASE_URL": f"{chat.base_url}/v1",
        "KINDRED_OPENAI_MODEL": "served-chat",
        "KINDRED_EMBEDDING_BACKEND": "openai",
        "KINDRED_EMBEDDING_URL": f"{chat.base_url}/v1",
        "KINDRED_EMBEDDING_MODEL": "served-embed",
        "KINDRED_MODELS_FILE": str(tmp_path / "models.toml"),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return load_settings(env_file=None)


async def chat_lines(kindred: Kindred, lines: list[str]) -> str:
    out = io.StringIO()
    pipe = ConsoleIO(lambda: lines.pop(0) if lines else "", out, io.StringIO(), interactive=False)

    async def ready() -> Kindred:
        return kindred

    await console_chat(ready(), "ann", pipe).run()
    return out.getvalue()


async def test_model_switches_the_server_a_reply_comes_from(
    servers: tuple[FakeOpenAI, FakeOpenAI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat, other = servers
    (tmp_path / "models.toml").write_text(models_toml(chat, other), encoding="utf-8")
    monkeypatch.setenv("OTHER_KEY", OTHER_KEY)
    kindred = await build(settings_for(monkeypatch, tmp_path, chat))
    try:
        printed = await chat_lines(kindred, ["hello\n", "/model other\n", "hello again\n"])
        assert kindred.models is not None and kindred.models.book().price("other") == (1.0, 2.0)
    finally:
        await kindred.close()
    assert (
        printed.index("Configured here.")
        < printed.index("Done: I answer with other")
        < printed.index("Other here.")
    )
    # The configured server also runs the memory jobs; a reply's prompt opens with the persona.
    bodies = (*chat.requests, *other.requests)
    replies = [
        (b["model"], b["messages"][-1]["content"]) for b in bodies if "Kindred" in b["messages"][0]["content"]
    ]
    assert replies == [("served-chat", "hello"), ("other-model", "hello again")] and len(other.requests) == 1
    assert other.headers[-1].get("Authorization") == f"Bearer {OTHER_KEY}"


async def test_a_listed_model_without_its_key_fails_its_reply_and_names_the_variable(
    servers: tuple[FakeOpenAI, FakeOpenAI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat, other = servers
    (tmp_path / "models.toml").write_text(
        models_toml(chat, other, "KINDRED_TEST_UNSET_KEY"), encoding="utf-8"
    )
    monkeypatch.delenv("KINDRED_TEST_UNSET_KEY", raising=False)
    kindred = await build(settings_for(monkeypatch, tmp_path, chat))
    try:
        printed = await chat_lines(kindred, ["/model other\n", "hello\n", "/model configured\n", "hi\n"])
        turns = await kindred.store.turns.recent_turns("ann", "console", 10)
    finally:
        await kindred.close()
    assert "needs its API key in KINDRED_TEST_UNSET_KEY, which is not set" in printed
    assert printed.rstrip().endswith("Configured here.") and other.requests == []
    assert [t.text for t in turns if t.role == "user"] == [
        "hello",
        "hi",
    ]  # the failed reply's message is kept


async def test_a_syntax_error_at_start_stops_it_before_anything_opens(
    servers: tuple[FakeOpenAI, FakeOpenAI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat, other = servers
    broken = models_toml(chat, other).replace('name = "other"', 'name = "other', 1)
    (tmp_path / "models.toml").write_text(broken, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        await build(settings_for(monkeypatch, tmp_path, chat))
    message = str(raised.value)
    assert str(tmp_path / "models.toml") in message and "line 11" in message and "\n" not in message
    assert not (tmp_path / "kindred.db").exists()  # not half-configured: the store was never opened
    assert chat.requests == [] and chat.embedding_requests == []
