"""The inference section: which model answers, which embeds, and where each runs."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings

from bot.wiring.settings.common import env_names, http_url, section_config


class InferenceSettings(BaseSettings):
    """Which model answers, and where it runs."""

    model_config = section_config()

    model: str = "bundled"
    # The admin's models ([personal] 3, docs/models.md); unset: models.toml in the data directory,
    # if it exists. No file: KINDRED_MODEL (and the backend settings below) answer everywhere.
    models_file: Path | None = None
    # Who embeds memories and queries: "local", MiniLM in this process (the `[local]` extra), or
    # "openai", an OpenAI-compatible `POST {KINDRED_EMBEDDING_URL}/embeddings` (a base install).
    embedding_backend: Literal["local", "openai"] = "local"
    # local: "bundled" (MiniLM), a directory or a cached Hub id; openai: the served model's name.
    embedding_model: str = Field(default="bundled", validate_default=True)
    # openai: the API's base, ending in /v1 (http://localhost:11434/v1 for Ollama).
    embedding_url: str | None = Field(default=None, validate_default=True)
    embedding_api_key: SecretStr | None = None
    # openai: the size of the served model's vectors; every answer is checked against it. The
    # PostgreSQL store's column holds 384 (MiniLM's size): another needs a migration there.
    embedding_dim: int = Field(default=384, ge=1, le=16384)
    embedding_timeout_s: float = Field(default=30.0, gt=0)
    # openai: texts per request.
    embedding_batch_size: int = Field(default=64, ge=1, le=2048)
    # "auto": ONNX Runtime (exported once from the model's files into the data dir), or torch
    # with one log line where that cannot run; "onnx": ONNX or fail; "torch": sentence-transformers.
    embedding_runtime: Literal["auto", "onnx", "torch"] = Field(
        default="auto", validation_alias=env_names("KINDRED_EMBEDDING_RUNTIME")
    )
    device: Literal["auto", "cpu", "cuda"] = "auto"
    generation_timeout_s: float = Field(default=120.0, gt=0)
    # The local engine's sampling temperature; 0: greedy (the same reply to the same prompt).
    # Unset: the engine's own default.
    temperature: float | None = Field(default=None, ge=0, le=2)
    # "local": transformers in this process (KINDRED_MODEL); "openai": an OpenAI-compatible server;
    # "celery": GPU workers (`kindred worker --queues gpu`) over Redis (REDIS_URL); "auto": GPU
    # workers while one consumes the gpu queue, else the local engine. Unset: "auto" with
    # REDIS_URL (Settings sees to it), else "local".
    backend: Literal["auto", "local", "openai", "celery"] = Field(
        default="local", validation_alias=env_names("KINDRED_INFERENCE_BACKEND")
    )
    # auto: how old (seconds) the answer to "does a worker consume the gpu queue?" may be before a
    # reply asks again.
    recheck_s: float = Field(default=10.0, gt=0, validation_alias=env_names("KINDRED_INFERENCE_RECHECK_S"))
    # celery: seconds to wait for a GPU worker to take a request before saying none answered.
    wait_s: float = Field(default=60.0, gt=0, validation_alias=env_names("KINDRED_INFERENCE_WAIT_S"))
    # Rows the local engine runs together in one generate.
    batch_size: int = Field(
        default=16, ge=1, le=256, validation_alias=env_names("KINDRED_INFERENCE_BATCH_SIZE")
    )
    # torch's CPU threads for the local engine; 0: half the CPUs. Every core is faster on a machine
    # that does nothing else (docs/benchmarks.md, "First run"), and far slower on a busy one.
    torch_threads: int = Field(default=0, ge=0, le=512, validation_alias=env_names("KINDRED_TORCH_THREADS"))
    # LoRA adapters, one folder per name; unset: <data dir>/adapters.
    adapters_dir: Path | None = None
    # Register new adapter versions with the server (vLLM's /v1/load_lora_adapter) before use.
    load_lora: bool = False
    # The adapters folder as the server sees it, when it differs (another machine, a container).
    openai_lora_root: str | None = None
    openai_base_url: str | None = Field(default=None, validate_default=True)
    openai_api_key: SecretStr | None = None
    openai_model: str | None = Field(default=None, validate_default=True)
    # A local tokenizer for counting prompt tokens ("bundled", a directory, a cached Hub id);
    # unset: a conservative estimate of one token per 3 characters.
    openai_tokenizer: str | None = None
    openai_context_window: int = Field(default=2048, ge=256)

    @field_validator("embedding_model")
    @classmethod
    def _embedding_model(cls, value: str, info: ValidationInfo) -> str:
        value = value.strip()
        if info.data.get("embedding_backend") == "openai" and value in ("", "bundled"):
            raise ValueError("is required when KINDRED_EMBEDDING_BACKEND=openai (the served model's name)")
        return value or "bundled"

    @field_validator("embedding_url")
    @classmethod
    def _embedding_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None:
            if info.data.get("embedding_backend") == "openai":
                raise ValueError(
                    "is required when KINDRED_EMBEDDING_BACKEND=openai (the base, ending in /v1)"
                )
            return None
        return http_url(value)

    @field_validator("openai_base_url")
    @classmethod
    def _openai_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None:
            if info.data.get("backend") == "openai":
                raise ValueError("is required when KINDRED_INFERENCE_BACKEND=openai")
            return None
        return http_url(value)

    @field_validator("openai_model")
    @classmethod
    def _openai_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None and info.data.get("backend") == "openai":
            raise ValueError("is required when KINDRED_INFERENCE_BACKEND=openai (the served model's name)")
        return value
