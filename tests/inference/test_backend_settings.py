"""KINDRED_INFERENCE_BACKEND and friends: parsed at start with one-line errors, and load_inference
picking the backend they describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.errors import ConfigError
from bot.inference.engine.local import LocalInference
from bot.inference.openai_compat import OpenAICompatInference
from bot.wiring.backends import load_inference
from bot.wiring.settings import InferenceSettings, Settings, load_settings

ALL = (
    "KINDRED_INFERENCE_BACKEND",
    "KINDRED_OPENAI_BASE_URL",
    "KINDRED_OPENAI_API_KEY",
    "KINDRED_OPENAI_MODEL",
    "KINDRED_ADAPTERS_DIR",
    "KINDRED_LOAD_LORA",
    "KINDRED_INFERENCE_BATCH_SIZE",
    "KINDRED_OPENAI_TOKENIZER",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ALL:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KINDRED_DATA_DIR", str(tmp_path))


def test_defaults_are_the_local_engine(tmp_path: Path) -> None:
    settings = load_settings(env_file=None)
    assert settings.inference.backend == "local"  # with REDIS_URL: auto (tests/workers/test_auto_*)
    assert settings.inference.batch_size == 16
    assert settings.adapters_path == tmp_path / "adapters"
    assert settings.inference.load_lora is False


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"KINDRED_INFERENCE_BACKEND": "vllm"},
            "KINDRED_INFERENCE_BACKEND: Input should be 'auto', 'local', 'openai' or 'celery'",
        ),
        (
            {"KINDRED_INFERENCE_BACKEND": "openai", "KINDRED_OPENAI_MODEL": "m"},
            "KINDRED_OPENAI_BASE_URL: is required",
        ),
        (
            {"KINDRED_INFERENCE_BACKEND": "openai", "KINDRED_OPENAI_BASE_URL": "http://h:8000"},
            "KINDRED_OPENAI_MODEL: is required",
        ),
        ({"KINDRED_OPENAI_BASE_URL": "h:8000"}, "KINDRED_OPENAI_BASE_URL: must start with http"),
        ({"KINDRED_LOAD_LORA": "maybe"}, "KINDRED_LOAD_LORA: Input should be a valid boolean"),
        ({"KINDRED_INFERENCE_BATCH_SIZE": "0"}, "KINDRED_INFERENCE_BATCH_SIZE: Input should be greater than"),
    ],
)
def test_invalid_values_fail_with_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as raised:
        load_settings(env_file=None)
    text = str(raised.value)
    assert message in text and "\n" not in text


def test_the_api_key_is_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDRED_OPENAI_API_KEY", "sk-hidden")
    settings = load_settings(env_file=None)
    assert "sk-hidden" not in repr(settings)
    assert settings.inference.openai_api_key is not None
    assert settings.inference.openai_api_key.get_secret_value() == "sk-hidden"


async def test_load_inference_builds_the_openai_backend(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KINDRED_INFERENCE_BACKEND", "openai")
    monkeypatch.setenv("KINDRED_OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("KINDRED_OPENAI_MODEL", "HuggingFaceTB/SmolLM2-135M-Instruct")
    monkeypatch.setenv("KINDRED_LOAD_LORA", "true")
    backend = load_inference(load_settings(env_file=None))
    assert isinstance(backend, OpenAICompatInference)
    assert backend.base_url == "http://127.0.0.1:8000"
    assert backend.model == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert backend.count_tokens("hello world") == 4  # no tokenizer configured: the estimate
    await backend.close()


def test_load_inference_builds_the_batching_local_engine(tiny_dir: Path, tmp_path: Path) -> None:
    settings = Settings(
        inference=InferenceSettings(
            model=str(tiny_dir), device="cpu", KINDRED_INFERENCE_BATCH_SIZE=4, adapters_dir=tmp_path
        )
    )
    engine = load_inference(settings)
    assert isinstance(engine, LocalInference)
    assert engine.max_batch == 4
