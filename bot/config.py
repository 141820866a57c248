"""Settings from the environment and an optional `.env`. Loaded once in `main()` and passed down."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
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

    @property
    def store_backend(self) -> Literal["sqlite", "postgres"]:
        return "postgres" if self.database_url and self.database_url.startswith("postgres") else "sqlite"

    @property
    def sqlite_path(self) -> Path:
        """`sqlite:///relative.db` or `sqlite:////absolute/path.db`; unset: under the data dir."""
        if self.database_url and self.database_url.startswith("sqlite:///"):
            return Path(self.database_url[len("sqlite:///") :])
        return self.data_dir / "kindred.db"


_ENV_NAMES = {
    "database_url": "DATABASE_URL",
    "redis_url": "REDIS_URL",
    "telegram_bot_token": "TELEGRAM_BOT_TOKEN",
    "discord_bot_token": "DISCORD_BOT_TOKEN",
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
