"""The README's "A capable model" lines, run. They are parsed from README.md itself, so the README
cannot drift from what works: each builds the real settings (load_settings) and gets a reply
through the real backend (load_inference).

- The OpenAI-compatible lines (Ollama, llama.cpp's server, vLLM) run against the loopback server
  of tests/inference/openai_server.py: only the base URL's host and port are pointed at it, its
  path (`/v1`) and every other value stay as the README writes them, and the server answers only
  to the model name the line gives.
- The Hugging Face line runs the local engine on the tiny model of tests/support/tiny_model.py,
  its Hub id replaced by the tiny model's folder: the tests never reach for the Hub.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bot.core.errors import ConfigError, InferenceError
from bot.core.models import ChatMessage
from bot.inference.engine.local import LocalInference
from bot.inference.model_files import prepare_model
from bot.inference.openai_compat import OpenAICompatInference
from bot.wiring.backends import load_inference
from bot.wiring.settings import Settings, load_settings
from tests.inference.openai_server import FakeOpenAI
from tests.support.streams import text_of
from tests.support.tiny_model import build_tiny_model

README = Path(__file__).resolve().parents[2] / "README.md"
# What a newcomer sees before scrolling: a terminal or a rendered page shows about this much.
FIRST_SCREEN_LINES = 50
SERVERS = ("Ollama", "llama.cpp", "vLLM", "Hugging Face")
# `NAME=value NAME=value make run`, alone on its line.
CONFIG_LINE = re.compile(r"^((?:[A-Z][A-Z0-9_]*=\S+ )+)make run$")
HELLO = [ChatMessage("system", "Be kind."), ChatMessage("user", "Hello!")]


@dataclass(frozen=True)
class ConfigLine:
    """One configuration line of the README: the comment above it names the server."""

    comment: str
    env: dict[str, str]
    number: int  # 1-based, in README.md

    @property
    def server(self) -> str:
        named = [server for server in SERVERS if server in self.comment]
        assert len(named) == 1, f"README line {self.number - 1} names none of {SERVERS}, or several"
        return named[0]


def config_lines(text: str) -> list[ConfigLine]:
    """Every `NAME=value … make run` line, with the comment line above it."""
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        match = CONFIG_LINE.match(line)
        if match is None:
            continue
        comment = lines[index - 1] if index else ""
        assert comment.startswith("# "), f"README line {index + 1} needs a comment above it naming its server"
        env = dict(part.split("=", 1) for part in match.group(1).split())
        found.append(ConfigLine(comment, env, index + 1))
    return found


LINES = config_lines(README.read_text(encoding="utf-8"))
OPENAI_LINES = [line for line in LINES if line.env.get("KINDRED_INFERENCE_BACKEND") == "openai"]
LOCAL_LINES = [line for line in LINES if "KINDRED_INFERENCE_BACKEND" not in line.env]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Only the README's line configures Kindred here, whatever the shell running the tests set."""
    for name in list(os.environ):
        if name.startswith("KINDRED_") and not name.startswith("KINDRED_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))


def settings_from(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Settings:
    with monkeypatch.context() as scoped:
        for name, value in env.items():
            scoped.setenv(name, value)
        return load_settings(env_file=None)


def outcome(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Settings | str:
    try:
        return settings_from(monkeypatch, env)
    except ConfigError as exc:
        return str(exc)


def test_the_first_screen_shows_the_two_commands_and_a_line_per_server() -> None:
    head = README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN_LINES]
    assert any(line.startswith("make run ") for line in head)
    assert any(line.startswith("make test ") for line in head)
    assert sorted(line.server for line in LINES) == sorted(SERVERS)
    assert all(line.number <= FIRST_SCREEN_LINES for line in LINES), [line.number for line in LINES]
    assert len(OPENAI_LINES) == 3 and len(LOCAL_LINES) == 1


@pytest.mark.parametrize("line", LINES, ids=lambda line: line.server)
def test_every_variable_on_a_line_is_read(monkeypatch: pytest.MonkeyPatch, line: ConfigLine) -> None:
    """A misspelt name is ignored by the settings (they skip what they do not know), so each name
    must change what the line configures when it is left out."""
    whole = outcome(monkeypatch, line.env)
    assert isinstance(whole, Settings), whole
    for name in line.env:
        without = {other: value for other, value in line.env.items() if other != name}
        assert outcome(monkeypatch, without) != whole, f"{name} changes nothing"


@pytest.mark.parametrize("line", OPENAI_LINES, ids=lambda line: line.server)
def test_the_port_is_the_one_the_comment_starts_the_server_on(line: ConfigLine) -> None:
    said = re.search(r"(?:--port |port )(\d+)", line.comment)
    assert said is not None, line.comment
    assert urlsplit(line.env["KINDRED_OPENAI_BASE_URL"]).port == int(said.group(1))


@pytest.fixture
async def server(request: pytest.FixtureRequest) -> AsyncIterator[FakeOpenAI]:
    line: ConfigLine = request.getfixturevalue("line")
    fake = await FakeOpenAI(base_model=line.env["KINDRED_OPENAI_MODEL"]).start()
    yield fake
    await fake.close()


def pointed_at(line: ConfigLine, server: FakeOpenAI) -> dict[str, str]:
    """The line with its base URL's host and port replaced by the loopback server's."""
    written = urlsplit(line.env["KINDRED_OPENAI_BASE_URL"])
    return {**line.env, "KINDRED_OPENAI_BASE_URL": server.base_url + written.path}


async def reply(settings: Settings, backend: type[OpenAICompatInference | LocalInference]) -> str:
    """A reply through the backend the settings load, which must be `backend`."""
    inference = load_inference(settings)
    assert isinstance(inference, backend), type(inference)
    try:
        return await text_of(inference.stream(HELLO, max_tokens=settings.chat.max_new_tokens))
    finally:
        await inference.close()


@pytest.mark.parametrize("line", OPENAI_LINES, ids=lambda line: line.server)
async def test_an_openai_line_gets_a_reply_from_the_server(
    monkeypatch: pytest.MonkeyPatch, line: ConfigLine, server: FakeOpenAI
) -> None:
    settings = settings_from(monkeypatch, pointed_at(line, server))
    assert await reply(settings, OpenAICompatInference) == "".join(server.chunks)
    assert [body["model"] for body in server.requests] == [line.env["KINDRED_OPENAI_MODEL"]]
    assert settings.inference.openai_api_key is None


@pytest.mark.parametrize("line", OPENAI_LINES[:1], ids=lambda line: line.server)
async def test_a_server_serving_another_model_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, line: ConfigLine, server: FakeOpenAI
) -> None:
    """The model name is sent and matters: a server that does not serve it answers 404."""
    settings = settings_from(monkeypatch, {**pointed_at(line, server), "KINDRED_OPENAI_MODEL": "not-pulled"})
    with pytest.raises(InferenceError, match="not-pulled"):
        await reply(settings, OpenAICompatInference)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.mark.parametrize("line", LOCAL_LINES, ids=lambda line: line.server)
async def test_the_hugging_face_line_runs_the_local_engine(
    monkeypatch: pytest.MonkeyPatch, line: ConfigLine, tiny_dir: Path, tmp_path: Path
) -> None:
    as_written = settings_from(monkeypatch, line.env)
    hub_id = line.env["KINDRED_MODEL"]
    assert as_written.inference.backend == "local" and as_written.inference.model == hub_id
    # Taken as a Hub id for transformers to fetch, not refused as a missing folder.
    assert prepare_model(hub_id, tmp_path) == Path(hub_id)
    # Greedy, so that the random-weight model's reply cannot end at its first token by chance.
    tiny = {**line.env, "KINDRED_MODEL": str(tiny_dir), "KINDRED_TEMPERATURE": "0"}
    settings = settings_from(monkeypatch, tiny)
    assert (await reply(settings, LocalInference)).strip()
