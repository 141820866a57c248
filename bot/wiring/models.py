"""The admin's models file (`models.toml` in the data directory, or KINDRED_MODELS_FILE), watched
as the personas file is, and each listed model's Inference, built on its first reply and kept.

The configured model (KINDRED_MODEL, or KINDRED_OPENAI_BASE_URL + KINDRED_OPENAI_MODEL) is the one
already loaded at start: a listed model that names it is that Inference, not a second copy, and
only it serves the learned adapters (they were trained on it)."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

from bot.core.chat.ports import Inference
from bot.core.chat_models import ChatModel, ModelBook, parse_models
from bot.core.errors import InferenceError
from bot.core.loading import LoadOnce
from bot.wiring.settings import Settings
from bot.wiring.watched_file import WatchedFile

log = logging.getLogger(__name__)
# A listed server model's context when models.toml gives none (KINDRED_OPENAI_CONTEXT_WINDOW's default).
SERVER_CONTEXT = 2048


def models_path(data_dir: Path, configured: Path | None) -> Path:
    return configured if configured is not None else data_dir / "models.toml"


class ModelFile(WatchedFile[ModelBook]):
    """A ModelSource over one file, reloaded when it changes. No file: an empty list (the
    configured model answers everywhere)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, parse_models, ModelBook(), what="models")

    def book(self) -> ModelBook:
        return self.current()


def load_model_file(settings: Settings) -> ModelFile:
    """The models file, read now. Raises ConfigError naming its line: the start stops."""
    return ModelFile(models_path(settings.data_dir, settings.inference.models_file))


def is_configured(settings: Settings, model: ChatModel) -> bool:
    """Whether `model` is the configured one, as KINDRED_INFERENCE_BACKEND runs it."""
    from bot.inference.openai_compat import api_root

    inference = settings.inference
    if inference.backend == "openai":
        assert inference.openai_base_url is not None
        same_server = model.url is not None and api_root(model.url) == api_root(inference.openai_base_url)
        return model.backend == "openai" and same_server and model.model == inference.openai_model
    return model.backend == "local" and model.model == inference.model


class ListedModels:
    """The ModelBackends: the configured Inference for the configured model, one Inference per
    other listed model, built once on a thread (a local one loads its weights)."""

    def __init__(self, settings: Settings, configured: Inference) -> None:
        self._settings = settings
        self._configured = configured
        # Keyed by the whole entry: an edited entry (a new url, another model id) is a new Inference.
        self._built: dict[ChatModel, LoadOnce[Inference]] = {}

    def is_configured(self, model: ChatModel) -> bool:
        return is_configured(self._settings, model)

    async def inference(self, model: ChatModel) -> Inference:
        if self.is_configured(model):
            return self._configured
        once = self._built.setdefault(model, LoadOnce(lambda: self._build(model), what=f"model {model.name}"))
        try:
            return await asyncio.to_thread(once.get)
        except InferenceError:
            self._built.pop(model, None)  # asked again next reply: a key set meanwhile counts
            raise
        except Exception as exc:  # a model that cannot load fails its reply, never the process
            self._built.pop(model, None)
            raise InferenceError(
                f"the model {model.name} cannot be loaded: {type(exc).__name__}: {exc}"
            ) from None

    def _build(self, model: ChatModel) -> Inference:
        settings = self._settings
        if model.backend == "openai":
            from bot.inference.openai_compat import OpenAICompatInference

            assert model.url is not None
            return OpenAICompatInference(
                model.url,
                model=model.model,
                api_key=api_key(model),
                key_setting=key_setting(model),
                timeout_s=settings.inference.generation_timeout_s,
                context_window=model.context or SERVER_CONTEXT,
            )
        from bot.wiring.backends import model_dir, require_extra

        require_extra("local", ("torch",), f"models.toml's local model {model.name}")
        from bot.inference.engine.local import LocalInference

        loaded = LocalInference.load(
            model_dir(model.model, settings.data_dir),
            device=settings.inference.device,
            timeout_s=settings.inference.generation_timeout_s,
            threads=settings.inference.torch_threads or None,
            max_batch=settings.inference.batch_size,
        )
        if model.context is not None:
            loaded.context_window = min(loaded.context_window, model.context)
        return loaded

    async def close(self) -> None:
        for once in self._built.values():
            built = once.peek()
            close = getattr(built, "close", None)
            if close is not None:
                await close()


def key_setting(model: ChatModel) -> str:
    """Where the admin sets this model's key, as a refusal names it."""
    return model.api_key_env or f"api_key_env for {model.name} in models.toml (it has none)"


def api_key(model: ChatModel) -> str | None:
    """The key from the variable the entry names. Unset: an InferenceError that names the
    variable, never a value."""
    if model.api_key_env is None:
        return None
    key = os.environ.get(model.api_key_env, "").strip()
    if not key:
        raise InferenceError(
            f"the model {model.name} needs its API key in {model.api_key_env}, which is not set"
        )
    return key
