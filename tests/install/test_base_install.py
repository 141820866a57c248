"""The base install, as someone without a GPU or torch gets it: a fresh venv, a non-editable
`pip install <repo>` with no extras (from PyPI, through pip's cache), then

- torch is not there (`import torch` fails), nor transformers;
- `kindred --help` works;
- `kindred run` answers a Telegram message (the loopback Bot API of tests/support/telegram_api.py)
  with its reply from a loopback OpenAI-compatible server (tests/inference/openai_server.py), which
  also embeds the message (`/v1/embeddings`), on a SQLite store in tmp.

Slow (a minute or two for pip, more on a cold cache): marked `install`, and run by CI like every
other test. The install is from a copy of the files a release carries, so that pip's build never
writes into the checkout.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adapters.telegram.conftest import ANN, replies_done
from tests.inference.openai_server import FakeOpenAI
from tests.support.telegram_api import FakeTelegramBotApi

pytestmark = [pytest.mark.install, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("pyproject.toml", "setup.py", "README.md", "constraints.txt", "bot", "workers", "schema")
START_S = 120
REPLY = ["Hello", " from", " the", " server", "!"]


@pytest.fixture(scope="module")
def base_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in SHIPPED:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, source / name)
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, str(source)], check=True, timeout=1100, env=_clean_env())
    return venv


def _clean_env() -> dict[str, str]:
    """The environment without this checkout's own settings or a PYTHONPATH that would import it."""
    prefixes = ("KINDRED_", "TELEGRAM_", "DISCORD_", "DATABASE_URL", "REDIS_URL", "PYTHON")
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def test_the_base_install_has_no_torch(base_venv: Path, tmp_path: Path) -> None:
    for module in ("torch", "transformers", "sentence_transformers", "peft", "trl", "onnxruntime"):
        found = subprocess.run(
            [str(base_venv / "bin" / "python"), "-c", f"import {module}"],
            capture_output=True, text=True, cwd=tmp_path, env=_clean_env(),
        )  # fmt: skip
        assert found.returncode != 0 and "ModuleNotFoundError" in found.stderr, module


def test_the_base_install_carries_every_package_and_data_file(base_venv: Path, tmp_path: Path) -> None:
    script = (
        "import importlib.resources as r, kindred_schema, bot.web.miniapps, bot.training;"
        "print(len(list(r.files(kindred_schema).joinpath('sqlite').glob('*.sql'))),"
        "len(list(r.files(kindred_schema).joinpath('postgres').glob('*.sql'))),"
        "r.files('bot.training').joinpath('data/regression.jsonl').is_file(),"
        "any(r.files('bot.web.miniapps').joinpath('templates').glob('*.html')))"
    )
    shown = subprocess.run(
        [str(base_venv / "bin" / "python"), "-c", script],
        capture_output=True, text=True, cwd=tmp_path, env=_clean_env(), check=True,
    )  # fmt: skip
    sqlite, postgres, regression, templates = shown.stdout.split()
    assert int(sqlite) == len(list((ROOT / "schema" / "sqlite").glob("*.sql")))
    assert int(postgres) == len(list((ROOT / "schema" / "postgres").glob("*.sql")))
    assert regression == templates == "True"
    script = "import bot, workers; print(bot.__path__[0], workers.__path__[0])"
    where = subprocess.run(
        [str(base_venv / "bin" / "python"), "-c", script],
        capture_output=True, text=True, cwd=tmp_path, env=_clean_env(), check=True,
    ).stdout.split()  # fmt: skip
    for package, installed in zip(("bot", "workers"), where, strict=True):
        assert installed.startswith(str(base_venv)), installed  # not this checkout
        ours = {p.relative_to(ROOT / package) for p in (ROOT / package).rglob("*.py")}
        theirs = {p.relative_to(installed) for p in Path(installed).rglob("*.py")}
        assert ours <= theirs, sorted(map(str, ours - theirs))


def test_kindred_help_works(base_venv: Path, tmp_path: Path) -> None:
    shown = subprocess.run(
        [str(base_venv / "bin" / "kindred"), "--help"],
        capture_output=True, text=True, cwd=tmp_path, env=_clean_env(),
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "run" in shown.stdout


async def test_kindred_run_answers_telegram_from_an_openai_compatible_server(
    base_venv: Path, tmp_path: Path
) -> None:
    server = await FakeOpenAI(chunks=REPLY, base_model="served-chat").start()
    try:
        async with FakeTelegramBotApi() as api:
            env = {
                **_clean_env(),
                "KINDRED_DATA_DIR": str(tmp_path / "data"),
                "DATABASE_URL": f"sqlite:///{tmp_path / 'kindred.db'}",
                "KINDRED_INFERENCE_BACKEND": "openai",
                "KINDRED_OPENAI_BASE_URL": f"{server.base_url}/v1",
                "KINDRED_OPENAI_MODEL": "served-chat",
                "KINDRED_EMBEDDING_BACKEND": "openai",
                "KINDRED_EMBEDDING_URL": f"{server.base_url}/v1",
                "KINDRED_EMBEDDING_MODEL": "served-embed",
                "KINDRED_EMBEDDING_API_KEY": "sk-embedding-secret-42",
                "KINDRED_WEB_PORT": "0",
                "KINDRED_LOG_LEVEL": "DEBUG",
                "TELEGRAM_BOT_TOKEN": api.token,
                "TELEGRAM_API_BASE_URL": api.base_url,
            }
            process = await asyncio.create_subprocess_exec(
                str(base_venv / "bin" / "kindred"), "run",
                env=env, cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            try:
                await api.wait_for_call("getUpdates", timeout=START_S)
                api.private_message(ANN, "hello, I like green tea")
                texts = await replies_done(api, ANN, 1, wait_s=60)
            finally:
                process.send_signal(signal.SIGTERM)
                _, stderr = await asyncio.wait_for(process.communicate(), 60)
    finally:
        await server.close()
    log = stderr.decode()
    assert process.returncode == 0, log[-3000:]
    assert texts and "".join(REPLY) in texts[-1]
    assert server.requests and server.requests[0]["model"] == "served-chat"
    embedded = [text for body in server.embedding_requests for text in body["input"]]
    assert any("green tea" in text for text in embedded)
    assert {body["model"] for body in server.embedding_requests} == {"served-embed"}
    assert "sk-embedding-secret-42" not in log and api.token not in log
    assert "Traceback" not in log
