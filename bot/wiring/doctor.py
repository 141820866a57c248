"""`kindred doctor`'s checks: what this installation uses, and whether each part answers.

Each check is a small function of the settings that says what it found, and OK or why not, in
one line. Nothing is loaded, converted or downloaded: model files are looked at, servers are
asked once with short timeouts, and every check runs at once, so the answer takes seconds.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import SecretStr

from bot.core.errors import ConfigError, KindredError
from bot.wiring.settings import Settings

# One network probe (a connect, a PING, a worker's answer); a whole check gets a little more.
PROBE_TIMEOUT_S = 2.0
CHECK_DEADLINE_S = 4.0
# Celery's inspect waits this long for every worker's reply, so it is the floor of a check with Redis.
WORKER_REPLY_S = 1.0
SQLITE_BUSY_MS = 500
_DETAIL_CHARS = 240
TELEGRAM_TOKEN_SHAPE = re.compile(r"\d+:[A-Za-z0-9_-]{30,}")
DISCORD_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}")

Status = Literal["ok", "fail", "off"]


@dataclass(frozen=True, slots=True)
class Check:
    """One part of the installation: `off` when it is not configured (not a failure)."""

    name: str
    status: Status
    detail: str


async def run_checks(settings: Settings) -> list[Check]:
    """Every check, run together, each within CHECK_DEADLINE_S, in a fixed order."""
    checks: list[tuple[str, Callable[[Settings], Awaitable[Check]]]] = [
        ("store", check_store),
        ("inference", check_inference),
        ("embedder", check_embedder),
        ("models", _check_models),
        ("redis", check_redis),
        ("workers", check_workers),
        ("telegram", check_telegram),
        ("discord", check_discord),
    ]
    return list(await asyncio.gather(*(checked(name, check(settings)) for name, check in checks)))


async def _check_models(settings: Settings) -> Check:
    from bot.wiring.doctor_models import check_models  # it builds on this module's helpers

    return await check_models(settings)


async def checked(name: str, check: Awaitable[Check]) -> Check:
    """`check`'s result; a failure or a hang past CHECK_DEADLINE_S becomes a failed Check."""
    try:
        return await asyncio.wait_for(check, CHECK_DEADLINE_S)
    except TimeoutError:
        return Check(name, "fail", f"no answer within {CHECK_DEADLINE_S:g} s")
    except KindredError as exc:
        return Check(name, "fail", one_line(str(exc)))
    except Exception as exc:  # a doctor reports a part it cannot check; it does not stop on it
        return Check(name, "fail", one_line(f"{type(exc).__name__}: {exc}"))


def one_line(text: str) -> str:
    """A driver's message on one line, short enough to read beside the others."""
    line = " ".join(text.split())
    return line if len(line) <= _DETAIL_CHARS else line[: _DETAIL_CHARS - 1] + "…"


# -- the store ---------------------------------------------------------------------------------


async def check_store(settings: Settings) -> Check:
    from bot.store import migrations

    if settings.store.backend == "postgres":
        from bot.store.postgres.store import schema_versions

        assert settings.store.database_url is not None
        where = f"postgres {postgres_place(settings.store.database_url)}"
        try:
            applied = await schema_versions(settings.store.database_url, timeout_s=PROBE_TIMEOUT_S)
        except KindredError as exc:
            return Check("store", "fail", one_line(f"{where}: {exc}"))
    else:
        path = settings.sqlite_path
        where = f"sqlite {path}"
        if not path.exists():
            problem = _uncreatable(path)
            if problem:
                return Check("store", "fail", f"{where}: {problem}")
            return Check("store", "ok", f"{where}, created at first start")
        try:
            applied = await _sqlite_versions(path)
        except KindredError as exc:
            return Check("store", "fail", one_line(f"{where}: {exc}"))
    pending = migrations.pending(settings.store.backend, set(applied))
    schema = f"schema {max(applied, default=0)}"
    if pending:
        schema += f", {len(pending)} migrations to apply (at start, or `kindred migrate`)"
    return Check("store", "ok", f"{where}, {schema}")


async def _sqlite_versions(path: Path) -> list[int]:
    from bot.store.sqlite.store import SqliteStore

    store = await SqliteStore.open(path, busy_timeout_ms=SQLITE_BUSY_MS, migrate=False)
    try:
        return await store.applied_versions()
    finally:
        await store.close()


def _uncreatable(path: Path) -> str | None:
    """Why a database file could not be created at `path`, or None when it can."""
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"no file yet, and {folder} is not writable"
    return None


def postgres_place(url: str) -> str:
    """user@host:port/database from a PostgreSQL URL: never its password."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    host = parts.hostname or query.get("host", ["localhost"])[0]
    port = parts.port or int(query.get("port", ["5432"])[0])
    user = f"{parts.username}@" if parts.username else ""
    return f"{user}{host}:{port}/{parts.path.lstrip('/') or parts.username or '?'}"


# -- models ------------------------------------------------------------------------------------


async def check_inference(settings: Settings) -> Check:
    inference = settings.inference
    if inference.backend == "openai":
        return await _check_openai(settings)
    from bot.inference.model_files import model_status

    found = await asyncio.to_thread(model_status, inference.model, settings.data_dir)
    if inference.backend == "celery":
        return Check("inference", "ok", f"celery (GPU workers, see workers): tokenizer of {found}")
    _need_torch()
    if inference.backend == "auto" and settings.workers.redis_url:
        return Check("inference", "ok", f"auto: {await _auto_choice(settings.workers.redis_url)}: {found}")
    return Check("inference", "ok", f"local: {found}")


async def _auto_choice(redis_url: str) -> str:
    """Where `auto` sends a reply now, as the backend asks it (bot/inference/auto.py)."""
    from bot.jobs.celery_probe import consumers
    from bot.wiring.backends import GPU_QUEUE

    try:
        found = await asyncio.to_thread(consumers, redis_url, GPU_QUEUE, WORKER_REPLY_S)
    except KindredError as exc:
        return f"local for now (cannot ask the workers: {one_line(str(exc))})"
    if found:
        return f"celery for now ({', '.join(found)} consumes {GPU_QUEUE}; tokenizer here)"
    return f"local for now (no worker consumes {GPU_QUEUE}; the model loads on the first reply)"


def _need_torch() -> None:
    # Looked up, not imported: importing torch takes longer than the whole doctor may.
    for package in ("torch", "transformers"):
        if importlib.util.find_spec(package) is None:
            raise ConfigError(f"the local engine needs {package}, which is not installed")


async def _check_openai(settings: Settings) -> Check:
    from bot.inference.openai_compat import api_root, served_models

    inference = settings.inference
    assert inference.openai_base_url is not None and inference.openai_model is not None
    key = inference.openai_api_key.get_secret_value() if inference.openai_api_key else None
    where = f"openai-compatible {without_credentials(api_root(inference.openai_base_url))}"
    models = await served_models(inference.openai_base_url, api_key=key, timeout_s=PROBE_TIMEOUT_S)
    if inference.openai_model not in models:
        listed = ", ".join(models[:5]) or "none"
        return Check(
            "inference", "fail", f"{where} does not list {inference.openai_model} (it lists {listed})"
        )
    return Check("inference", "ok", f"{where}, model {inference.openai_model}")


def without_credentials(url: str) -> str:
    """`http://user:pass@host/v1` → `http://host/v1`."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()


async def check_embedder(settings: Settings) -> Check:
    """As `backends.load_embedder` chooses: a server with `openai`; locally ONNX unless told torch,
    and `auto` falls back to torch."""
    if settings.inference.embedding_backend == "openai":
        return await _check_openai_embedder(settings)
    from bot.inference.embedders.onnx import onnx_status
    from bot.inference.embedders.sentence import torch_status

    runtime, model = settings.inference.embedding_runtime, settings.inference.embedding_model
    if runtime == "torch":
        return Check("embedder", "ok", await asyncio.to_thread(torch_status, model))
    try:
        return Check("embedder", "ok", await asyncio.to_thread(onnx_status, model, settings.data_dir))
    except KindredError as exc:
        if runtime == "onnx":
            raise
        fallback = await asyncio.to_thread(torch_status, model)
        return Check("embedder", "ok", f"{fallback}; not ONNX: {one_line(str(exc))}")


async def _check_openai_embedder(settings: Settings) -> Check:
    """One text embedded by the server, as a reply would: its failure says why (never the key)."""
    from bot.inference.embedders.openai import OpenAIEmbedder
    from bot.wiring.backends import load_embedder

    inference = settings.inference
    where = f"{without_credentials(inference.embedding_url or '')}, model {inference.embedding_model}"
    embedder = load_embedder(settings)
    assert isinstance(embedder, OpenAIEmbedder)
    try:
        await embedder.embed(["kindred doctor"])
    except KindredError as exc:
        return Check("embedder", "fail", one_line(str(exc)))
    finally:
        await embedder.close()
    return Check("embedder", "ok", f"{where} ({inference.embedding_dim} dimensions)")


# -- jobs --------------------------------------------------------------------------------------


async def check_redis(settings: Settings) -> Check:
    url = settings.workers.redis_url
    if not url:
        return Check("redis", "off", "not configured (REDIS_URL): jobs run on threads in this process")
    from bot.jobs.celery_probe import ping_redis

    where = redis_place(url)
    try:
        await asyncio.to_thread(ping_redis, url, PROBE_TIMEOUT_S)
    except KindredError as exc:
        return Check("redis", "fail", one_line(f"{where}: {exc}"))
    return Check("redis", "ok", where)


def redis_place(url: str) -> str:
    """host:port/db from a Redis URL: never its password."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return parts.path
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path or '/0'}"


def needed_queues(settings: Settings) -> list[str]:
    """The queues this configuration sends jobs to, so some worker must consume each."""
    queues = ["default"]
    if settings.training.enabled:
        queues.append("train")
    if settings.inference.backend == "celery":
        queues.append("gpu")
    return queues


async def check_workers(settings: Settings) -> Check:
    url = settings.workers.redis_url
    if not url:
        return Check("workers", "off", "not configured: no REDIS_URL")
    from bot.jobs.celery_probe import ping_redis, worker_queues

    try:
        await asyncio.to_thread(ping_redis, url, PROBE_TIMEOUT_S)
    except KindredError:
        return Check("workers", "fail", "not asked: Redis does not answer")
    workers = await asyncio.to_thread(worker_queues, url, WORKER_REPLY_S)
    if not workers:
        return Check(
            "workers", "fail", f"none answered within {WORKER_REPLY_S:g} s (start one: `kindred worker`)"
        )
    served = {queue for queues in workers.values() for queue in queues}
    missing = [queue for queue in needed_queues(settings) if queue not in served]
    answered = f"{len(workers)} answered, consuming {', '.join(sorted(served))}"
    if missing:
        return Check("workers", "fail", f"{answered}; none consumes {', '.join(missing)}")
    return Check("workers", "ok", answered)


# -- platforms ---------------------------------------------------------------------------------


async def check_telegram(settings: Settings) -> Check:
    return token_check(
        "telegram", "TELEGRAM_BOT_TOKEN", settings.telegram.bot_token, TELEGRAM_TOKEN_SHAPE,
        "digits, a colon, then the secret",
    )  # fmt: skip


async def check_discord(settings: Settings) -> Check:
    return token_check(
        "discord", "DISCORD_BOT_TOKEN", settings.discord.bot_token, DISCORD_TOKEN_SHAPE,
        "three parts joined by dots",
    )  # fmt: skip


def token_check(
    name: str, variable: str, secret: SecretStr | None, shape: re.Pattern[str], looks: str
) -> Check:
    """Whether a platform's token is set and shaped like one. Only its shape is said, never a
    character of it: a reason that quoted the start of a token would leak part of a secret."""
    if secret is None:
        return Check(name, "off", f"not configured ({variable})")
    token = secret.get_secret_value()
    if not token.strip():
        return Check(name, "fail", f"{variable} is set but empty")
    if token != token.strip():
        return Check(name, "fail", f"{variable} has spaces or a line break around it")
    if not shape.fullmatch(token):
        return Check(name, "fail", f"{variable} does not look like a bot token ({looks})")
    return Check(name, "ok", f"{variable} is set")


def failed(checks: Iterable[Check]) -> list[Check]:
    return [check for check in checks if check.status == "fail"]
