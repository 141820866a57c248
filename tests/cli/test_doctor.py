"""`kindred doctor` as a person runs it: the real settings, store, model files and embedder export,
and real servers that are down (closed ports). Every case checks the exit status and that no
secret reaches the output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.store import migrations
from tests.jobs.workerproc import ROOT, free_port

TELEGRAM_TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"
DISCORD_TOKEN = "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"
PG_PASSWORD = "pg-Pa55word-never-shown"
REDIS_PASSWORD = "redis-Pa55word-never-shown"
OPENAI_KEY = "sk-openai-key-never-shown-0123456789"
# Whatever the doctor is asked to read, these are the values that must never be printed.
SECRETS = (TELEGRAM_TOKEN, DISCORD_TOKEN, PG_PASSWORD, REDIS_PASSWORD, OPENAI_KEY, "admin-Pa55-never-shown")
# A hurried check still takes a few seconds here; a probe that waits out a driver's own retries
# (a pool's 30 s) would not.
QUICK_S = 15.0
# One store is enough where the store is not what a test is about.
on_sqlite = pytest.mark.parametrize("kindred_env", ["sqlite"], indirect=True)
_SETTINGS_TOUCHED = (
    "REDIS_URL", "TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN", "KINDRED_MODEL", "KINDRED_INFERENCE_BACKEND",
    "KINDRED_EMBEDDING_RUNTIME", "KINDRED_EMBEDDING_MODEL", "KINDRED_OPENAI_BASE_URL", "KINDRED_OPENAI_MODEL",
    "KINDRED_OPENAI_API_KEY", "KINDRED_ADMIN_PASSWORD", "KINDRED_TRAIN_ENABLED",
)  # fmt: skip


@pytest.fixture
def installed(kindred_env: str, tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A working installation: a migrated store of each kind, the tiny model, MiniLM exported."""
    for name in _SETTINGS_TOUCHED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KINDRED_MODEL", str(tiny_model))
    assert main(["migrate"]) == 0
    return kindred_env


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, tuple[str, str]], str]:
    """Exit status, each item's (label, detail), and everything printed."""
    capsys.readouterr()
    status = main(["doctor", *args])
    out, err = capsys.readouterr()
    items = {}
    for line in out.splitlines()[:-1]:
        name, label, detail = line.split(maxsplit=2)
        items[name] = (label, detail)
    return status, items, out + err


def assert_no_secret(printed: str) -> None:
    for secret in SECRETS:
        assert secret not in printed
        assert secret[:8] not in printed  # nor the start of one


def test_a_working_installation_is_ok_everywhere(
    installed: str, capsys: pytest.CaptureFixture[str], tiny_model: Path
) -> None:
    status, items, printed = doctor(capsys)
    assert status == 0, printed
    newest = max(m.version for m in migrations.available("postgres" if installed == "postgres" else "sqlite"))
    label, detail = items["store"]
    assert label == "OK" and detail.startswith(installed) and detail.endswith(f"schema {newest}")
    assert items["inference"] == ("OK", f"local: {tiny_model}: config, weights and tokenizer present")
    label, detail = items["embedder"]
    assert label == "OK" and detail.startswith(
        "ONNX Runtime, sentence-transformers/all-MiniLM-L6-v2 exported"
    )
    for name in ("redis", "workers", "telegram", "discord"):
        assert items[name][0] == "off", items[name]
    assert printed.splitlines()[-1] == "everything configured answers"


@on_sqlite
def test_redis_down_fails_redis_and_workers(
    installed: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", f"redis://:{REDIS_PASSWORD}@127.0.0.1:{free_port()}/7")
    status, items, printed = doctor(capsys)
    assert status == 1
    label, detail = items["redis"]
    assert label == "FAIL" and "Connection refused" in detail
    assert items["workers"] == ("FAIL", "not asked: Redis does not answer")
    assert items["store"][0] == items["inference"][0] == "OK"
    assert printed.splitlines()[-1] == "2 problems"
    assert_no_secret(printed)


@on_sqlite
def test_postgres_unreachable_names_the_server_not_its_password(
    installed: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    monkeypatch.setenv("DATABASE_URL", f"postgresql://kindred:{PG_PASSWORD}@127.0.0.1:{port}/kindred")
    started = time.monotonic()
    status, items, printed = doctor(capsys)
    assert time.monotonic() - started < QUICK_S
    assert status == 1
    label, detail = items["store"]
    assert label == "FAIL"
    assert detail.startswith(f"postgres kindred@127.0.0.1:{port}/kindred: ") and "refused" in detail
    assert_no_secret(printed)


@on_sqlite
def test_a_model_path_that_does_not_exist_fails_inference_only(
    installed: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-model"
    monkeypatch.setenv("KINDRED_MODEL", str(missing))
    status, items, _ = doctor(capsys)
    assert status == 1
    assert items["inference"] == (
        "FAIL",
        f"KINDRED_MODEL='{missing}': no such directory, and not a Hugging Face model id",
    )
    assert [name for name, (label, _) in items.items() if label == "FAIL"] == ["inference"]


@on_sqlite
def test_a_model_folder_without_weights_says_what_is_missing(
    installed: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    tiny_model: Path,
) -> None:
    half = tmp_path / "half-copied"
    half.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (half / name).write_bytes((tiny_model / name).read_bytes())
    monkeypatch.setenv("KINDRED_MODEL", str(half))
    status, items, _ = doctor(capsys)
    assert status == 1
    assert items["inference"] == ("FAIL", f"KINDRED_MODEL='{half}' has no weights (*.safetensors)")


@on_sqlite
@pytest.mark.parametrize("value", ["", "   "])
def test_a_token_set_but_empty_is_not_ok(
    installed: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", value)
    monkeypatch.setenv("DISCORD_BOT_TOKEN", DISCORD_TOKEN)
    status, items, printed = doctor(capsys)
    assert status == 1
    assert items["telegram"] == ("FAIL", "TELEGRAM_BOT_TOKEN is set but empty")
    assert items["discord"] == ("OK", "DISCORD_BOT_TOKEN is set")
    assert_no_secret(printed)


@on_sqlite
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_no_secret_is_printed_whatever_fails(
    installed: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    """Every secret at once, with every server it belongs to down: the reasons name hosts and
    variables, never a value."""
    closed = free_port()
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TELEGRAM_TOKEN)
    monkeypatch.setenv("DISCORD_BOT_TOKEN", f" {DISCORD_TOKEN}\n")  # pasted with a line break: FAIL
    monkeypatch.setenv("DATABASE_URL", f"postgresql://kindred:{PG_PASSWORD}@127.0.0.1:{closed}/kindred")
    monkeypatch.setenv("REDIS_URL", f"redis://:{REDIS_PASSWORD}@127.0.0.1:{closed}/7")
    monkeypatch.setenv("KINDRED_INFERENCE_BACKEND", "openai")
    monkeypatch.setenv("KINDRED_OPENAI_BASE_URL", f"http://127.0.0.1:{closed}/v1")
    monkeypatch.setenv("KINDRED_OPENAI_MODEL", "smollm2")
    monkeypatch.setenv("KINDRED_OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("KINDRED_ADMIN_PASSWORD", SECRETS[-1])
    status, _, printed = doctor(capsys, *(["--json"] if as_json else []))
    assert status == 1
    assert_no_secret(printed)
    if as_json:
        report = json.loads(printed)
        found = {check["name"]: check["status"] for check in report["checks"]}
        assert report["ok"] is False
        assert found == {"store": "fail", "inference": "fail", "embedder": "ok", "redis": "fail",
                         "workers": "fail", "telegram": "ok", "discord": "fail", "models": "off"}  # fmt: skip


@on_sqlite
def test_the_command_answers_in_seconds_without_loading_a_model(
    installed: str, tmp_path: Path, tiny_model: Path
) -> None:
    """The real entry point in a process of its own: its exit status, its JSON, and that neither
    torch nor transformers was imported on the way (the files are checked, no forward pass)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TELEGRAM_BOT_TOKEN="")
    probe = (
        "import sys; from bot.cli.main import main; status = main(['doctor', '--json']);"
        "heavy = ('torch', 'transformers', 'onnxruntime', 'sentence_transformers');"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr); raise SystemExit(status)"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert time.monotonic() - started < QUICK_S
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
    report = json.loads(done.stdout)
    assert [c for c in report["checks"] if c["status"] == "fail"] == [
        {"name": "telegram", "status": "fail", "detail": "TELEGRAM_BOT_TOKEN is set but empty"}
    ]
