"""Settings from the environment and an optional `.env`. Loaded once in `main()` and passed down."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from platformdirs import user_data_dir
from pydantic import AliasChoices, Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.core.errors import ConfigError

DEFAULT_PERSONA = (
    "You are Kindred, a warm and attentive companion. You remember what the person told you "
    "before and use it naturally. Keep replies short, kind and concrete."
)

DEFAULT_REACTIONS: dict[str, float] = {
    "👍": 1.0,
    "❤️": 1.0,
    "❤": 1.0,
    "🔥": 1.0,
    "🎉": 1.0,
    "👎": -1.0,
    "😡": -1.0,
    "💩": -1.0,
}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="KINDRED_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    # Conventional names first; everything else is KINDRED_*.
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "KINDRED_DATABASE_URL")
    )
    redis_url: str | None = Field(default=None, validation_alias=AliasChoices("REDIS_URL"))
    telegram_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TELEGRAM_BOT_TOKEN")
    )
    discord_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_BOT_TOKEN")
    )

    telegram_api_base_url: str = Field(
        default="https://api.telegram.org/bot",
        validation_alias=AliasChoices("TELEGRAM_API_BASE_URL", "KINDRED_TELEGRAM_API_BASE_URL"),
    )
    telegram_webhook_url: str | None = Field(
        default=None, validation_alias=AliasChoices("TELEGRAM_WEBHOOK_URL", "KINDRED_TELEGRAM_WEBHOOK_URL")
    )
    telegram_webhook_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("TELEGRAM_WEBHOOK_SECRET", "KINDRED_TELEGRAM_WEBHOOK_SECRET"),
    )
    # In groups: answer when mentioned or replied to ("mention"), every message ("all"), or never.
    telegram_group_mode: Literal["mention", "all", "off"] = "mention"
    telegram_feedback_buttons: bool = True
    # Telegram asks bots to stay under about 30 messages a second overall; a local Bot API server
    # or a load test may allow more.
    telegram_sends_per_second: float = Field(default=30.0, gt=0)
    discord_dev_guild_id: int | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_DEV_GUILD_ID", "KINDRED_DISCORD_DEV_GUILD_ID")
    )
    discord_feedback_buttons: bool = True
    # Privileged intent: read every message in servers. Off: DMs, mentions, replies and slash commands.
    discord_message_content: bool = False
    # Platform-qualified ids, comma-separated: telegram:42, discord:1234, discord-guild:99,
    # telegram-chat:-100…. Unset: everyone may talk.
    allowed_ids: str | None = None
    admin_ids: str = ""
    # Per person; 0 turns limiting off. The burst lets someone send a few lines at once.
    user_messages_per_minute: float = Field(default=20.0, ge=0)
    user_message_burst: int = Field(default=5, ge=1)
    web_host: str = "127.0.0.1"
    web_port: int = Field(default=8080, ge=0, le=65535)

    data_dir: Path = Field(default_factory=lambda: Path(user_data_dir("kindred", appauthor=False)))
    model: str = "bundled"
    embedding_model: str = "bundled"
    device: Literal["auto", "cpu", "cuda"] = "auto"
    persona: str = DEFAULT_PERSONA
    max_new_tokens: int = Field(default=96, ge=1, le=8192)
    generation_timeout_s: float = Field(default=120.0, gt=0)
    recent_turns: int = Field(default=8, ge=0, le=200)
    memory_top_k: int = Field(default=5, ge=0, le=100)
    memory_token_budget: int = Field(default=400, ge=0)
    max_message_chars: int = Field(default=100_000, ge=1)
    sqlite_busy_timeout_ms: int = Field(default=5000, ge=0)
    reactions: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_REACTIONS))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"

    # -- inference backends --
    # "local": transformers in this process (KINDRED_MODEL); "openai": an OpenAI-compatible server;
    # "celery": GPU workers (`kindred worker --queues gpu`) over Redis (REDIS_URL).
    inference_backend: Literal["local", "openai", "celery"] = "local"
    # celery: seconds to wait for a GPU worker to take a request before saying none answered.
    inference_wait_s: float = Field(default=60.0, gt=0)
    # Rows the local engine runs together in one generate.
    inference_batch_size: int = Field(default=16, ge=1, le=256)
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
            if info.data.get("inference_backend") == "openai":
                raise ValueError("is required when KINDRED_INFERENCE_BACKEND=openai")
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("openai_model")
    @classmethod
    def _openai_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = (value or "").strip() or None
        if value is None and info.data.get("inference_backend") == "openai":
            raise ValueError("is required when KINDRED_INFERENCE_BACKEND=openai (the served model's name)")
        return value

    @property
    def adapters_path(self) -> Path:
        return self.adapters_dir if self.adapters_dir is not None else self.data_dir / "adapters"
    # -- end inference backends --

    # -- memory --
    # The reward of a reply: R = α·tool uses + β·turns that followed + γ·proactive successes + reaction.
    reward_alpha: float = 1.0
    reward_beta: float = 0.1
    reward_gamma: float = 1.0
    # A pause longer than this ends the session whose turns count towards β.
    session_gap_minutes: float = Field(default=30.0, gt=0)
    # How fast each kind of memory fades, as a half-life in days (JSON); 0: it never fades.
    # A kind not named here fades like a turn.
    # The defaults are bot.core.scoring.DEFAULT_HALF_LIVES (a test keeps the two the same).
    memory_half_life_days: dict[str, float] = Field(
        default_factory=lambda: {
            "preference": 0.0, "fact": 0.0, "event": 21.0, "turn": 120.0, "imported": 120.0,
            "summary": 120.0,
        }
    )
    # How much the assistant's own words count beside the person's (1: alike, 0: never recalled first).
    memory_assistant_weight: float = Field(default=0.85, ge=0, le=1)
    # How far reward, age and verification move a memory: relevance × (1 + mix·(w − ½)).
    memory_weight_mix: float = Field(default=0.2, ge=0, le=2)
    # A memory whose normalised reward is above this is kept in context first.
    memory_favoured_reward: float = Field(default=0.7, ge=0, le=1)

    # After each exchange a job extracts lasting statements; the model adds candidates to the
    # rules' when this is on (its output is validated; off: rules only, no model time spent).
    memory_extraction_model: bool = True
    # Consolidation: sessions older than this many days become summaries; past `memory_budget`
    # recallable memories a person's covered raw turns are archived, oldest first.
    memory_consolidate_after_days: float = Field(default=14.0, gt=0)
    memory_budget: int = Field(default=5000, ge=10)
    # Beat's memory upkeep (checks, consolidation), a UTC crontab.
    memory_upkeep_cron: str = "41 3 * * *"

    @field_validator("memory_half_life_days")
    @classmethod
    def _half_lives(cls, value: dict[str, float]) -> dict[str, float]:
        if any(days < 0 for days in value.values()):
            raise ValueError("half-lives must be 0 (never fades) or more days")
        return value
    # -- end memory --

    # -- workers --
    # Jobs go to Celery workers when REDIS_URL is set; otherwise they run on this many threads here.
    job_threads: int = Field(default=2, ge=1, le=64)
    # Unset: longer than the longest job's hard limit, so a long job is never delivered twice.
    visibility_timeout_s: float | None = Field(default=None, gt=0)
    # Beat's schedule, as 5-field crontabs (minute hour day-of-month month day-of-week), UTC.
    upkeep_cron: str = "17 4 * * *"
    # Seconds the one-beat lock in Redis lives unless the running beat renews it.
    beat_lock_ttl_s: int = Field(default=60, ge=5)
    # "development" lets Flower run without a password on a developer's own machine.
    env: Literal["production", "development"] = "production"
    flower_user: str | None = None
    flower_password: SecretStr | None = None
    flower_port: int = Field(default=5555, ge=1, le=65535)
    # Where /admin links to Flower; unset: no link.
    flower_url: str | None = None
    # HTTP basic auth for /admin (any user name); unset: /admin is not served.
    admin_password: SecretStr | None = None

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

    @field_validator("persona")
    @classmethod
    def _persona_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    @field_validator("telegram_api_base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("telegram_webhook_url")
    @classmethod
    def _https_webhook(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith("https://"):
            raise ValueError("must be an https:// URL that Telegram can reach")
        return value

    @property
    def store_backend(self) -> Literal["sqlite", "postgres"]:
        return "postgres" if self.database_url and self.database_url.startswith("postgres") else "sqlite"

    @property
    def sqlite_path(self) -> Path:
        """`sqlite:///relative.db` or `sqlite:////absolute/path.db`; unset: under the data dir."""
        if self.database_url and self.database_url.startswith("sqlite:///"):
            return Path(self.database_url[len("sqlite:///") :])
        return self.data_dir / "kindred.db"


def derived_webhook_secret(token: str) -> str:
    """The Telegram webhook secret when none is configured: every replica derives the same one."""
    return hashlib.sha256(b"kindred-telegram-webhook:" + token.encode()).hexdigest()


def secret_values(settings: Settings) -> list[str]:
    """Every configured secret, for the log redaction."""
    found = [
        secret.get_secret_value()
        for secret in (
            settings.telegram_bot_token,
            settings.discord_bot_token,
            settings.telegram_webhook_secret,
            settings.flower_password,
            settings.admin_password,
            settings.openai_api_key,
        )
        if secret is not None
    ]
    if settings.telegram_bot_token is not None and settings.telegram_webhook_secret is None:
        found.append(derived_webhook_secret(settings.telegram_bot_token.get_secret_value()))
    if settings.database_url:
        password = urlsplit(settings.database_url).password
        if password:
            found.append(password)
    return found


def id_set(value: str | None) -> frozenset[str] | None:
    """`a, b ,c` → {"a", "b", "c"}; None stays None (no list at all)."""
    if value is None:
        return None
    return frozenset(part.strip() for part in value.split(",") if part.strip())


_ENV_NAMES = {
    "database_url": "DATABASE_URL",
    "redis_url": "REDIS_URL",
    "telegram_bot_token": "TELEGRAM_BOT_TOKEN",
    "discord_bot_token": "DISCORD_BOT_TOKEN",
    "telegram_api_base_url": "TELEGRAM_API_BASE_URL",
    "telegram_webhook_url": "TELEGRAM_WEBHOOK_URL",
    "telegram_webhook_secret": "TELEGRAM_WEBHOOK_SECRET",
    "discord_dev_guild_id": "DISCORD_DEV_GUILD_ID",
}


def load_settings(env_file: Path | None = Path(".env")) -> Settings:
    """Read the settings, or raise ConfigError whose one line names the bad variable."""
    try:
        return Settings(_env_file=env_file)  # type: ignore[call-arg]
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "?"
        # An alias (DATABASE_URL) comes back as it is; a field name gets its prefix.
        name = field if field.isupper() else _ENV_NAMES.get(field, f"KINDRED_{field.upper()}")
        reason = str(first["msg"]).removeprefix("Value error, ")
        # The message never echoes the value: it may be a secret.
        raise ConfigError(f"invalid configuration: {name}: {reason}") from None
