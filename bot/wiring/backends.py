"""Which implementation serves each port: the store, the embedder, inference and the job runner.

Implementations are imported inside the functions, so that a command that needs no model (or
no database driver) starts without loading one.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from typing import TYPE_CHECKING

from bot.core.chat.ports import Inference
from bot.core.errors import ConfigError
from bot.core.jobs import JobRegistry, Jobs
from bot.core.memory.ports import Embedder
from bot.core.store import Store
from bot.wiring.settings import InferenceSettings, Settings

if TYPE_CHECKING:
    from pathlib import Path

    from bot.inference.engine.local import LocalInference
    from bot.store.postgres.store import PostgresStore
    from bot.store.sqlite.store import SqliteStore

log = logging.getLogger(__name__)

GPU_QUEUE = "gpu"  # where kindred.inference.* jobs go (bot/core/jobs/__init__.py routes them)
# Celery's inspect waits this long for the workers' replies: what `auto` pays to ask.
PROBE_TIMEOUT_S = 1.0
# Before replies leave the GPU workers: a worker busy with a batch gets longer to answer.
CONFIRM_TIMEOUT_S = 3.0


async def open_store(settings: Settings, *, migrate: bool = True) -> Store:
    """The configured store, migrated to the current schema unless `migrate` is False."""
    return await open_concrete_store(settings, migrate=migrate)


async def open_concrete_store(settings: Settings, *, migrate: bool) -> SqliteStore | PostgresStore:
    """The configured store as its own class: with what the Protocol leaves out (its migrations)."""
    if settings.store.backend == "postgres":
        from bot.store.postgres.store import PostgresStore

        assert settings.store.database_url is not None
        return await PostgresStore.open(settings.store.database_url, migrate=migrate)
    from bot.store.sqlite.store import SqliteStore

    return await SqliteStore.open(
        settings.sqlite_path,
        busy_timeout_ms=settings.store.sqlite_busy_timeout_ms,
        dim=vector_dim(settings),
        migrate=migrate,
    )


async def missing_migrations(store: SqliteStore | PostgresStore) -> list[int]:
    """The versions this Kindred ships that `store` has not applied yet (`kindred migrate` applies them)."""
    from bot.store import migrations

    applied = set(await store.applied_versions())
    dialect: migrations.Dialect = "postgres" if store.backend == "postgres" else "sqlite"
    return [step.version for step in migrations.pending(dialect, applied)]


def vector_dim(settings: Settings) -> int:
    """The size of the configured embedder's vectors, as the SQLite store must know it: the
    server's (KINDRED_EMBEDDING_DIM) with `openai`, MiniLM's 384 in this process."""
    inference = settings.inference
    return inference.embedding_dim if inference.embedding_backend == "openai" else 384


async def check_embedder(store: Store, embedder: Embedder) -> None:
    """Refuse (ConfigError) an embedder whose vectors the store's memories cannot be compared with:
    another model than the one that embedded them, or another size than the store holds.

    Refused rather than re-embedded: re-embedding every memory would hold the bot's start for as
    long as the whole store takes (and spend a hosted API's calls) without being asked, and
    PostgreSQL's column cannot hold vectors of another size without a migration. The message says
    how to go back, or to start a new store."""
    configured = f"{embedder.model_name!r} ({embedder.dim} dimensions)"
    if embedder.dim != store.vector_dim:
        raise ConfigError(
            f"the embedder {configured} does not fit this store, whose vectors have {store.vector_dim} "
            "dimensions: choose an embedding model of that size (KINDRED_EMBEDDING_MODEL, "
            "KINDRED_EMBEDDING_DIM)"
        )
    recorded = await store.memories_embedder()
    if recorded is not None and recorded != (embedder.model_name, embedder.dim):
        model, dim = recorded
        raise ConfigError(
            f"the memories in this store were embedded by {model!r} ({dim} dimensions), and the "
            f"configured embedder is {configured}: vectors of two models cannot be compared, so "
            "Kindred will not mix them. Set KINDRED_EMBEDDING_BACKEND, KINDRED_EMBEDDING_MODEL (and "
            "KINDRED_EMBEDDING_DIM) back to what embedded them, or start a new store (DATABASE_URL)"
        )


async def migrate_store(settings: Settings) -> tuple[str, list[int], list[int]]:
    """Apply pending migrations. Returns the backend, the versions applied now, and all applied."""
    store = await open_concrete_store(settings, migrate=False)
    try:
        applied = await store.migrate()
        return store.backend, applied, await store.applied_versions()
    finally:
        await store.close()


def quiet_model_loading() -> None:
    # Progress bars and load reports belong to a developer's console, not a person's chat.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TQDM_DISABLE", "1")  # the one-time GGUF conversion uses plain tqdm


def load_embedder(settings: Settings) -> Embedder:
    """The configured embedder: an OpenAI-compatible server (`openai`), or MiniLM in this process
    (`local`, the `[local]` extra). Locally, runtime `auto` prefers ONNX Runtime and falls back to
    torch, saying why in one log line; `onnx` fails instead of falling back."""
    if settings.inference.embedding_backend == "openai":
        return _openai_embedder(settings.inference)
    require_extra("local", ("onnxruntime", "sentence_transformers"), "KINDRED_EMBEDDING_BACKEND=local")
    quiet_model_loading()
    runtime, model = settings.inference.embedding_runtime, settings.inference.embedding_model
    if runtime != "torch":
        from bot.inference.embedders.onnx import OnnxEmbedder

        try:
            return OnnxEmbedder.load(model, data_dir=settings.data_dir)
        except ConfigError as exc:
            if runtime == "onnx":
                raise ConfigError(f"KINDRED_EMBEDDING_RUNTIME=onnx: {exc}") from exc
            log.warning("embedding with torch (sentence-transformers): %s", exc)
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.load(model)


def _openai_embedder(inference: InferenceSettings) -> Embedder:
    from bot.inference.embedders.openai import OpenAIEmbedder

    assert inference.embedding_url is not None
    key = inference.embedding_api_key.get_secret_value() if inference.embedding_api_key else None
    return OpenAIEmbedder(
        inference.embedding_url,
        model=inference.embedding_model,
        dim=inference.embedding_dim,
        api_key=key,
        timeout_s=inference.embedding_timeout_s,
        batch_size=inference.embedding_batch_size,
    )


def require_extra(extra: str, modules: tuple[str, ...], setting: str) -> None:
    """Raise ConfigError, saying what to install or set instead, unless one of `modules` is installed.
    A base install (`pip install kindred`) has no torch: its model and embedder are a server's."""
    if any(importlib.util.find_spec(name) is not None for name in modules):
        return
    raise ConfigError(
        f"{setting} runs a model in this process, which needs the [{extra}] extra "
        f"(pip install 'kindred[{extra}]'); or use an OpenAI-compatible server: "
        "KINDRED_INFERENCE_BACKEND=openai and KINDRED_EMBEDDING_BACKEND=openai (docs/configuration.md)"
    )


def model_dir(name: str, data_dir: Path) -> Path:
    from bot.inference.model_files import prepare_model

    return prepare_model(name, data_dir)


def load_inference(settings: Settings) -> Inference:
    """The configured backend: the local engine (loads the model; blocks), an OpenAI-compatible
    server, GPU workers over Celery (`celery`: loads only the tokenizer), or `auto`: GPU workers
    while one is there, else the local engine (the local engine alone without REDIS_URL)."""
    quiet_model_loading()
    inference = settings.inference
    if inference.backend == "openai":
        return _openai_inference(inference, settings)
    if inference.backend == "celery":
        return _remote_inference(settings)
    if inference.backend == "auto" and settings.workers.redis_url:
        return _auto_inference(settings, settings.workers.redis_url)
    return load_local_inference(settings)


def _remote_inference(settings: Settings) -> Inference:
    from bot.inference.gpu_workers.remote import RemoteInference
    from bot.wiring.jobs import load_jobs  # jobs.py builds on the loaders in this module

    if not settings.workers.redis_url:
        raise ConfigError(
            "invalid configuration: REDIS_URL: is required when KINDRED_INFERENCE_BACKEND=celery"
        )
    return RemoteInference.connect(
        load_jobs(settings),
        settings.workers.redis_url,
        model_dir(settings.inference.model, settings.data_dir),
        wait_s=settings.inference.wait_s,
        timeout_s=settings.inference.generation_timeout_s,
    )


def _auto_inference(settings: Settings, redis_url: str) -> Inference:
    """GPU workers while one consumes the gpu queue, else the local engine, loaded on first need."""
    from bot.core.loading import LoadOnce
    from bot.inference.auto import AutoInference
    from bot.jobs.celery_probe import consumers

    def present(timeout_s: float = PROBE_TIMEOUT_S) -> bool:
        return bool(consumers(redis_url, GPU_QUEUE, timeout_s))

    return AutoInference(
        _remote_inference(settings),
        LoadOnce(lambda: load_local_inference(settings), what="local inference model"),
        present,
        confirm=lambda: present(CONFIRM_TIMEOUT_S),
        recheck_s=settings.inference.recheck_s,
    )


def replies_place(backend: str, inference: Inference) -> str:
    """Where replies are generated now, in words, for /admin: `auto` says which it chose."""
    from bot.inference.auto import AutoInference

    if isinstance(inference, AutoInference):
        chosen = "GPU workers (celery)" if inference.chosen == "celery" else "this process (local)"
        return f"auto: {chosen} for now"
    return {"celery": "GPU workers (celery)", "openai": "an OpenAI-compatible server"}.get(
        backend, "this process (local)"
    )


def _openai_inference(inference: InferenceSettings, settings: Settings) -> Inference:
    from bot.inference.openai_compat import OpenAICompatInference, local_token_counter

    assert inference.openai_base_url is not None and inference.openai_model is not None
    key = inference.openai_api_key.get_secret_value() if inference.openai_api_key else None
    counter = None
    if inference.openai_tokenizer:
        counter = local_token_counter(model_dir(inference.openai_tokenizer, settings.data_dir))
    return OpenAICompatInference(
        inference.openai_base_url,
        model=inference.openai_model,
        api_key=key,
        timeout_s=inference.generation_timeout_s,
        context_window=inference.openai_context_window,
        count_tokens=counter,
        adapters_dir=settings.adapters_path,
        load_lora=inference.load_lora,
        lora_root=inference.openai_lora_root,
    )


def load_local_inference(settings: Settings) -> LocalInference:
    """The local engine (transformers, this process): loads the model, which blocks a while."""
    require_extra("local", ("torch",), f"KINDRED_INFERENCE_BACKEND={settings.inference.backend}")
    quiet_model_loading()
    from bot.inference.engine.local import LocalInference, Sampling

    temperature = settings.inference.temperature
    return LocalInference.load(
        model_dir(settings.inference.model, settings.data_dir),
        device=settings.inference.device,
        sampling=None if temperature is None else Sampling(temperature=temperature),
        timeout_s=settings.inference.generation_timeout_s,
        max_batch=settings.inference.batch_size,
        threads=settings.inference.torch_threads or None,
        adapters_dir=settings.adapters_path,
    )


def job_runner(settings: Settings, registry: JobRegistry) -> Jobs:
    """Celery workers when REDIS_URL is set; otherwise a thread pool in this process."""
    if settings.workers.redis_url:
        from bot.jobs.celery_runner import CeleryJobs

        return CeleryJobs.connect(settings.workers.redis_url, registry)
    from bot.jobs.inprocess import InProcessJobs

    return InProcessJobs(registry, workers=settings.workers.job_threads)
