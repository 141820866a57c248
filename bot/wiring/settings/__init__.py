"""Settings from the environment and an optional `.env`, in sections. Loaded once in `main()` and
handed down: each part receives its own section, or options built from it, never the whole.

Every field's environment name is `model_config["env_prefix"]` + its name in capitals, unless
the field names its own (`validation_alias`): conventional names such as `DATABASE_URL`, or a
name kept from before the sections. Defaults that the core also needs are taken from the core's
own dataclasses, so that each is written once.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from urllib.parse import urlsplit

from dotenv import dotenv_values
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings

from bot.adapters.telegram.secret import derived_webhook_secret
from bot.core.errors import ConfigError
from bot.wiring.settings.documents import DocumentSettings
from bot.wiring.settings.inference import InferenceSettings
from bot.wiring.settings.platforms import DiscordSettings, TelegramSettings
from bot.wiring.settings.sections import (
    ChatSettings,
    GeneralSettings,
    MemorySettings,
    SharedStateSettings,
    StoreSettings,
    WebSettings,
    WorkerSettings,
)
from bot.wiring.settings.speech import SpeechSettings
from bot.wiring.settings.training import TrainingSettings
from bot.wiring.settings.tts import TtsSettings
from bot.wiring.settings.vision import VisionSettings

__all__ = [
    "DEPRECATED_NAMES",
    "IGNORED_NAMES",
    "SECTIONS",
    "ChatSettings",
    "DiscordSettings",
    "DocumentSettings",
    "GeneralSettings",
    "InferenceSettings",
    "MemorySettings",
    "Settings",
    "SharedStateSettings",
    "SpeechSettings",
    "StoreSettings",
    "TelegramSettings",
    "TrainingSettings",
    "TtsSettings",
    "VisionSettings",
    "WebSettings",
    "WorkerSettings",
    "env_name",
    "id_set",
    "load_settings",
    "secret_values",
]
log = logging.getLogger(__name__)

# Old environment names that still work, each with the one that replaced it: a deployment's
# configuration keeps working through an upgrade, and load_settings says what to rename.
DEPRECATED_NAMES: dict[str, str] = {"KINDRED_TRAINING_DEFAULT": "KINDRED_TRAIN_DEFAULT"}
# Old names that no longer set anything, each with what replaced it: still accepted (a deployment
# keeps starting), and load_settings says it is ignored.
IGNORED_NAMES: dict[str, str] = {
    "KINDRED_TRAIN_GATE_SYCOPHANCY_TOLERANCE": (
        "the sycophancy check is now a paired test: KINDRED_TRAIN_GATE_SYCOPHANCY_ALPHA and "
        "KINDRED_TRAIN_GATE_SYCOPHANCY_MAX_EXTRA"
    ),
}

SECTIONS: dict[str, type[BaseSettings]] = {
    "general": GeneralSettings,
    "store": StoreSettings,
    "chat": ChatSettings,
    "telegram": TelegramSettings,
    "discord": DiscordSettings,
    "inference": InferenceSettings,
    "memory": MemorySettings,
    "workers": WorkerSettings,
    "web": WebSettings,
    "training": TrainingSettings,
    "shared": SharedStateSettings,
    "documents": DocumentSettings,
    "speech": SpeechSettings,
    "vision": VisionSettings,
    "tts": TtsSettings,
}


class Settings(BaseModel):
    """Every section. A section not given is read from the environment (no `.env`)."""

    model_config = ConfigDict(frozen=True)

    general: GeneralSettings = Field(default_factory=GeneralSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    discord: DiscordSettings = Field(default_factory=DiscordSettings)
    inference: InferenceSettings = Field(default_factory=InferenceSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    workers: WorkerSettings = Field(default_factory=WorkerSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    training: TrainingSettings = Field(default_factory=TrainingSettings)
    shared: SharedStateSettings = Field(default_factory=SharedStateSettings)
    documents: DocumentSettings = Field(default_factory=DocumentSettings)
    speech: SpeechSettings = Field(default_factory=SpeechSettings)
    vision: VisionSettings = Field(default_factory=VisionSettings)
    tts: TtsSettings = Field(default_factory=TtsSettings)

    @property
    def shared_state_url(self) -> str | None:
        """Where replicas share their state: KINDRED_SHARED_STATE_URL, else REDIS_URL; None: here."""
        configured = self.shared.state_url
        if configured == "local":
            return None
        return configured or self.workers.redis_url

    @model_validator(mode="before")
    @classmethod
    def _auto_inference_with_redis(cls, data: object) -> object:
        """KINDRED_INFERENCE_BACKEND unset and REDIS_URL set: `auto` (GPU workers when one is there)."""
        if not isinstance(data, dict):
            return data
        inference = data.get("inference") or InferenceSettings()
        workers = data.get("workers") or WorkerSettings()
        if not isinstance(inference, InferenceSettings) or not isinstance(workers, WorkerSettings):
            return data  # plain dicts: validated as given
        if workers.redis_url and "backend" not in inference.model_fields_set:
            inference = inference.model_copy(update={"backend": "auto"})
        return {**data, "inference": inference, "workers": workers}

    @property
    def data_dir(self) -> Path:
        return self.general.data_dir

    @property
    def sqlite_path(self) -> Path:
        return self.store.sqlite_path(self.general.data_dir)

    @property
    def adapters_path(self) -> Path:
        """Where adapter versions live: the local engine, GPU workers, the OpenAI backend's loader
        and the trainer all read this one folder (unset: under the data dir, in the data volume)."""
        configured = self.inference.adapters_dir
        return configured if configured is not None else self.general.data_dir / "adapters"


def env_name(section: type[BaseSettings], field: str) -> str:
    """The environment variable that sets `field` of `section`: its first alias, else prefix + name.
    A validation error names a field by the alias it was read under; that name is returned as it is."""
    info = section.model_fields.get(field)
    if info is None:
        return field
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    if isinstance(alias, str):
        return alias
    return f"{section.model_config.get('env_prefix', '')}{field}".upper()


def load_settings(env_file: Path | None = Path(".env")) -> Settings:
    """Read the settings, or raise ConfigError whose one line names the bad variable. An old name
    (DEPRECATED_NAMES) still sets its setting, with a deprecation warning naming its new one; a
    retired one (IGNORED_NAMES) is accepted and ignored, with a warning saying what replaced it."""
    warn_deprecated_names(env_file)
    sections: dict[str, BaseSettings] = {}
    for name, section in SECTIONS.items():
        try:
            sections[name] = section(_env_file=env_file)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first["loc"] else "?"
            reason = str(first["msg"]).removeprefix("Value error, ")
            # The message never echoes the value: it may be a secret.
            raise ConfigError(f"invalid configuration: {env_name(section, field)}: {reason}") from None
    return Settings.model_validate(sections)


def warn_deprecated_names(env_file: Path | None) -> None:
    """Warn (a DeprecationWarning and a log line) for each old name set in the environment or `.env`."""
    # Environment names are matched regardless of case, as pydantic-settings reads them.
    present = {name.upper() for name in os.environ}
    if env_file is not None and env_file.is_file():
        present |= {name.upper() for name in dotenv_values(env_file)}
    messages = [
        f"{old} is deprecated and will stop working in a later release: rename it {new}"
        for old, new in DEPRECATED_NAMES.items()
        if old in present
    ] + [f"{old} is deprecated and ignored: {why}" for old, why in IGNORED_NAMES.items() if old in present]
    for message in messages:
        warnings.warn(message, DeprecationWarning, stacklevel=3)
        log.warning(message)


def secret_values(settings: Settings) -> list[str]:
    """Every configured secret, for the log redaction."""
    found = [
        secret.get_secret_value()
        for secret in (
            settings.telegram.bot_token,
            settings.discord.bot_token,
            settings.telegram.webhook_secret,
            settings.workers.flower_password,
            settings.web.admin_password,
            settings.inference.openai_api_key,
            settings.inference.embedding_api_key,
            settings.speech.speech_api_key,
            settings.vision.vision_api_key,
            settings.tts.tts_api_key,
        )
        if secret is not None
    ]
    telegram = settings.telegram
    if telegram.bot_token is not None and telegram.webhook_secret is None:
        found.append(derived_webhook_secret(telegram.bot_token.get_secret_value()))
    if settings.store.database_url:
        password = urlsplit(settings.store.database_url).password
        if password:
            found.append(password)
    return list(dict.fromkeys(found))


def id_set(value: str | None) -> frozenset[str] | None:
    """`a, b ,c` → {"a", "b", "c"}; None stays None (no list at all)."""
    if value is None:
        return None
    return frozenset(part.strip() for part in value.split(",") if part.strip())
