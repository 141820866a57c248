"""Settings from the environment and an optional `.env`, in sections. Loaded once in `main()` and
handed down: each part receives its own section, or options built from it, never the whole.

Every field's environment name is `model_config["env_prefix"]` + its name in capitals, unless
the field names its own (`validation_alias`): conventional names such as `DATABASE_URL`, or a
name kept from before the sections. Defaults that the core also needs are taken from the core's
own dataclasses, so that each is written once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from platformdirs import user_data_dir
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.adapters.telegram.secret import derived_webhook_secret
from bot.app.training_settings import TrainingSettings
from bot.core.chat.conversation import ConversationPolicy
from bot.core.chat.prompt import DEFAULT_PERSONA
from bot.core.errors import ConfigError
from bot.core.learning.reward import DEFAULT_REACTIONS, RewardWeights
from bot.core.memory.consolidation import ConsolidationPolicy
from bot.core.memory.scoring import DEFAULT_HALF_LIVES, Scoring

_SCORING = Scoring()
_REWARD = RewardWeights()
_CONSOLIDATION = ConsolidationPolicy()
_CONVERSATION = ConversationPolicy(persona=DEFAULT_PERSONA)


def _config(prefix: str = "KINDRED_") -> SettingsConfigDict:
    # env_file stays off unless load_settings passes one: a test never reads a stray `.env`.
    # No populate_by_name: it would also read prefix + field name for a field that names its own
    # variable (KINDRED_BACKEND beside KINDRED_INFERENCE_BACKEND). Such a field is built by that name.
    return SettingsConfigDict(env_prefix=prefix, env_file=None, env_file_encoding="utf-8", extra="ignore")


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value


class GeneralSettings(BaseSettings):
    """Where Kindred keeps its files, how it logs, and in which mode it runs."""

    model_config = _config()

    data_dir: Path = Field(default_factory=lambda: Path(user_data_dir("kindred", appauthor=False)))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    # "development" lets Flower run without a password on a developer's own machine.
    env: Literal["production", "development"] = "production"
    # `kindred run` retries a platform it cannot reach (a network blip, a proxy still starting):
    # this many attempts, the waits doubling from start_backoff_s up to 30 s (8 → about 90 s).
    start_attempts: int = Field(default=8, ge=1, le=100)
    start_backoff_s: float = Field(default=1.0, gt=0, le=60)
    # The chat platforms `kindred run` serves, comma-separated (telegram, discord); unset: every
    # one with a token. Replicas behind one address serve Telegram's webhook, and Discord's gateway
    # stays with one process (two would both answer).
    run_platforms: str | None = None

    @field_validator("run_platforms")
    @classmethod
    def _known_platforms(cls, value: str | None) -> str | None:
        names = {name.strip() for name in (value or "").split(",") if name.strip()}
        if names - {"telegram", "discord"}:
            raise ValueError("must name telegram and/or discord, comma-separated")
        return ",".join(sorted(names)) or None

    def serves(self, platform: str) -> bool:
        return self.run_platforms is None or platform in self.run_platforms.split(",")


class StoreSettings(BaseSettings):
    """The memory store: SQLite under the data dir unless DATABASE_URL names another."""

    model_config = _config()

    database_url: str | None = Field(
        default=None, validation_alias=_env("DATABASE_URL", "KINDRED_DATABASE_URL")
    )
    sqlite_busy_timeout_ms: int = Field(default=5000, ge=0)

    @field_validator("database_url")
    @classmethod
    def _known_scheme(cls, value: str | None) -> str | None:
        if value is None or value.strip() == "":
            return None
        if value.startswith("sqlite:///") and len(value) > len("sqlite:///"):
            return value
        if not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be sqlite:///PATH, postgresql://… or postgres://…")
        return value

    @property
    def backend(self) -> Literal["sqlite", "postgres"]:
        return "postgres" if self.database_url and self.database_url.startswith("postgres") else "sqlite"

    def sqlite_path(self, data_dir: Path) -> Path:
        """`sqlite:///relative.db` or `sqlite:////absolute/path.db`; unset: under the data dir."""
        if self.database_url and self.database_url.startswith("sqlite:///"):
            return Path(self.database_url[len("sqlite:///") :])
        return data_dir / "kindred.db"


class ChatSettings(BaseSettings):
    """How Kindred talks, and who may talk to it."""

    model_config = _config()

    persona: str = DEFAULT_PERSONA
    max_new_tokens: int = Field(default=_CONVERSATION.max_new_tokens, ge=1, le=8192)
    recent_turns: int = Field(default=_CONVERSATION.recent_turns, ge=0, le=200)
    max_message_chars: int = Field(default=_CONVERSATION.max_message_chars, ge=1)
    reactions: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_REACTIONS))
    # Platform-qualified ids, comma-separated: telegram:42, discord:1234, discord-guild:99,
    # telegram-chat:-100…. Unset: everyone may talk.
    allowed_ids: str | None = None
    admin_ids: str = ""
    # Per person; 0 turns limiting off. The burst lets someone send a few lines at once.
    user_messages_per_minute: float = Field(default=20.0, ge=0)
    user_message_burst: int = Field(default=5, ge=1)

    @field_validator("persona")
    @classmethod
    def _persona_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()


class TelegramSettings(BaseSettings):
    model_config = _config("KINDRED_TELEGRAM_")

    bot_token: SecretStr | None = Field(default=None, validation_alias=_env("TELEGRAM_BOT_TOKEN"))
    api_base_url: str = Field(
        default="https://api.telegram.org/bot",
        validation_alias=_env("TELEGRAM_API_BASE_URL", "KINDRED_TELEGRAM_API_BASE_URL"),
    )
    webhook_url: str | None = Field(
        default=None, validation_alias=_env("TELEGRAM_WEBHOOK_URL", "KINDRED_TELEGRAM_WEBHOOK_URL")
    )
    webhook_secret: SecretStr | None = Field(
        default=None, validation_alias=_env("TELEGRAM_WEBHOOK_SECRET", "KINDRED_TELEGRAM_WEBHOOK_SECRET")
    )
    # In groups: answer when mentioned or replied to ("mention"), every message ("all"), or never.
    group_mode: Literal["mention", "all", "off"] = "mention"
    feedback_buttons: bool = True
    # Telegram asks bots to stay under about 30 messages a second overall; a local Bot API server
    # or a load test may allow more. With shared state, every replica together.
    sends_per_second: float = Field(default=30.0, gt=0)
    # A webhook post is answered when its update is handled, or after this long at most.
    webhook_answer_s: float = Field(default=8.0, gt=0, le=50)

    @field_validator("api_base_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        return _http_url(value)

    @field_validator("webhook_url")
    @classmethod
    def _https_webhook(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith("https://"):
            raise ValueError("must be an https:// URL that Telegram can reach")
        return value


class DiscordSettings(BaseSettings):
    model_config = _config("KINDRED_DISCORD_")

    bot_token: SecretStr | None = Field(default=None, validation_alias=_env("DISCORD_BOT_TOKEN"))
    dev_guild_id: int | None = Field(
        default=None, validation_alias=_env("DISCORD_DEV_GUILD_ID", "KINDRED_DISCORD_DEV_GUILD_ID")
    )
    feedback_buttons: bool = True
    # Privileged intent: read every message in servers. Off: DMs, mentions, replies and slash commands.
    message_content: bool = False


class InferenceSettings(BaseSettings):
    """Which model answers, and where it runs."""

    model_config = _config()

    model: str = "bundled"
    embedding_model: str = "bundled"
    # "auto": ONNX Runtime (exported once from the model's files into the data dir), or torch
    # with one log line where that cannot run; "onnx": ONNX or fail; "torch": sentence-transformers.
    embedding_runtime: Literal["auto", "onnx", "torch"] = Field(
        default="auto", validation_alias=_env("KINDRED_EMBEDDING_RUNTIME")
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
        default="local", validation_alias=_env("KINDRED_INFERENCE_BACKEND")
    )
    # auto: how old (seconds) the answer to "does a worker consume the gpu queue?" may be before a
    # reply asks again.
    recheck_s: float = Field(default=10.0, gt=0, validation_alias=_env("KINDRED_INFERENCE_RECHECK_S"))
    # celery: seconds to wait for a GPU worker to take a request before saying none answered.
    wait_s: float = Field(default=60.0, gt=0, validation_alias=_env("KINDRED_INFERENCE_WAIT_S"))
    # Rows the local engine runs together in one generate.
    batch_size: int = Field(default=16, ge=1, le=256, validation_alias=_env("KINDRED_INFERENCE_BATCH_SIZE"))
    # torch's CPU threads for the local engine; 0: half the CPUs. Every core is faster on a machine
    # that does nothing else (docs/benchmarks.md, "First run"), and far slower on a busy one.
    torch_threads: int = Field(default=0, ge=0, le=512, validation_alias=_env("KINDRED_TORCH_THREADS"))
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

    @field_validator("openai_base_url")
    @classmethod
    def _openai_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None:
            if info.data.get("backend") == "openai":
                raise ValueError("is required when KINDRED_INFERENCE_BACKEND=openai")
            return None
        return _http_url(value)

    @field_validator("openai_model")
    @classmethod
    def _openai_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None and info.data.get("backend") == "openai":
            raise ValueError("is required when KINDRED_INFERENCE_BACKEND=openai (the served model's name)")
        return value


class MemorySettings(BaseSettings):
    """Recall, reward, decay and the memory jobs (KINDRED_MEMORY_*, and the reward weights)."""

    model_config = _config("KINDRED_MEMORY_")

    top_k: int = Field(default=_CONVERSATION.memory_top_k, ge=0, le=100)
    token_budget: int = Field(default=_CONVERSATION.memory_token_budget, ge=0)
    # How fast each kind of memory fades, as a half-life in days (JSON); 0: it never fades.
    # A kind not named here fades like a turn.
    half_life_days: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_HALF_LIVES))
    # How much the assistant's own words count beside the person's (1: alike, 0: never recalled first).
    assistant_weight: float = Field(default=_SCORING.assistant_weight, ge=0, le=1)
    # How far reward, age and verification move a memory: relevance × (1 + mix·(w − ½)).
    weight_mix: float = Field(default=_SCORING.mix, ge=0, le=2)
    # A memory whose normalised reward is above this is kept in context first.
    favoured_reward: float = Field(default=_SCORING.favoured_reward, ge=0, le=1)
    # The reward of a reply: R = α·tool uses + β·turns that followed + γ·proactive successes + reaction.
    reward_alpha: float = Field(default=_REWARD.alpha, validation_alias=_env("KINDRED_REWARD_ALPHA"))
    reward_beta: float = Field(default=_REWARD.beta, validation_alias=_env("KINDRED_REWARD_BETA"))
    reward_gamma: float = Field(default=_REWARD.gamma, validation_alias=_env("KINDRED_REWARD_GAMMA"))
    # A pause longer than this ends the session whose turns count towards β.
    session_gap_minutes: float = Field(
        default=_REWARD.session_gap.total_seconds() / 60,
        gt=0,
        validation_alias=_env("KINDRED_SESSION_GAP_MINUTES"),
    )
    # After each exchange a job extracts lasting statements; the model adds candidates to the
    # rules' when this is on (its output is validated; off: rules only, no model time spent).
    extraction_model: bool = True
    # Consolidation: sessions older than this many days become summaries; past `budget`
    # recallable memories a person's covered raw turns are archived, oldest first.
    consolidate_after_days: float = Field(default=_CONSOLIDATION.older_than.days, gt=0)
    budget: int = Field(default=_CONSOLIDATION.budget, ge=10)

    @field_validator("half_life_days")
    @classmethod
    def _half_lives(cls, value: dict[str, float]) -> dict[str, float]:
        if any(days < 0 for days in value.values()):
            raise ValueError("half-lives must be 0 (never fades) or more days")
        return value


class WorkerSettings(BaseSettings):
    """Jobs, Celery workers, beat and Flower."""

    model_config = _config()

    redis_url: str | None = Field(default=None, validation_alias=_env("REDIS_URL"))
    # Jobs go to Celery workers when REDIS_URL is set; otherwise they run on this many threads here.
    job_threads: int = Field(default=2, ge=1, le=64)
    # Unset: longer than the longest job's hard limit, so a long job is never delivered twice.
    visibility_timeout_s: float | None = Field(default=None, gt=0)
    # Beat's schedule, as 5-field crontabs (minute hour day-of-month month day-of-week), UTC.
    upkeep_cron: str = "17 4 * * *"
    memory_upkeep_cron: str = "41 3 * * *"
    # Proactive check-ins ([proactive]): every few minutes, a reminder rings at most this late.
    proactive_cron: str = "*/5 * * * *"
    # Seconds the one-beat lock in Redis lives unless the running beat renews it.
    beat_lock_ttl_s: int = Field(default=60, ge=5)
    flower_user: str | None = None
    flower_password: SecretStr | None = None
    flower_port: int = Field(default=5555, ge=1, le=65535)
    # Where /admin links to Flower; unset: no link.
    flower_url: str | None = None


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class SharedStateSettings(BaseSettings):
    """What bot replicas share (webhook intake, rate limits, flood control): Redis, or this process."""

    model_config = _config("KINDRED_SHARED_")

    # redis://…; "local": this process only (one replica). Unset: REDIS_URL when set, else local.
    state_url: str | None = Field(default=None, validation_alias=_env("KINDRED_SHARED_STATE_URL"))
    # A replica that stops renewing its holds (it died) stalls its chats this long at most, and its
    # updates are handed out again after it.
    lease_s: float = Field(default=30.0, ge=1, le=600)

    @field_validator("state_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        value = (value or "").strip() or None
        if value is not None and value != "local" and not value.startswith(REDIS_SCHEMES):
            raise ValueError("must be redis://…, rediss://…, unix://… or local")
        return value


class WebSettings(BaseSettings):
    """The web server: Telegram's webhook, /healthz and /admin."""

    model_config = _config("KINDRED_WEB_")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    # HTTP basic auth for /admin (any user name); unset: /admin is not served.
    admin_password: SecretStr | None = Field(default=None, validation_alias=_env("KINDRED_ADMIN_PASSWORD"))
    # Mini-apps: the origin their links use (another host than /admin's keeps them apart; unset:
    # this server's own address), builds at once per person, the model's pass, and each app's state.
    apps_url: str | None = Field(default=None, validation_alias=_env("KINDRED_APPS_URL"))
    app_builds_per_person: int = Field(
        default=2, ge=1, le=20, validation_alias=_env("KINDRED_APP_BUILDS_PER_PERSON")
    )
    app_model_pass: bool = Field(default=True, validation_alias=_env("KINDRED_APP_MODEL_PASS"))
    # Whether the model writes an app's whole page (through the free-form checks, the template as
    # fallback): "auto" is on only with the OpenAI-compatible backend, a served model that can.
    app_free_form: Literal["auto", "on", "off"] = Field(
        default="auto", validation_alias=_env("KINDRED_APP_FREE_FORM")
    )
    app_state_bytes: int = Field(
        default=65536, ge=1024, le=1 << 22, validation_alias=_env("KINDRED_APP_STATE_BYTES")
    )


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
    """Read the settings, or raise ConfigError whose one line names the bad variable."""
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
