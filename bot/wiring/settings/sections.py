"""The sections about where Kindred lives and how it behaves: files, store, chat, memory, jobs,
shared state and the web server."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from bot.core.chat.conversation import ConversationPolicy
from bot.core.chat.prompt import DEFAULT_PERSONA
from bot.core.learning.reward import DEFAULT_REACTIONS, RewardWeights
from bot.core.memory.consolidation import ConsolidationPolicy
from bot.core.memory.scoring import DEFAULT_HALF_LIVES, Scoring
from bot.wiring.settings.common import REDIS_SCHEMES, env_names, section_config

_SCORING = Scoring()
_REWARD = RewardWeights()
_CONSOLIDATION = ConsolidationPolicy()
_CONVERSATION = ConversationPolicy(persona=DEFAULT_PERSONA)


class GeneralSettings(BaseSettings):
    """Where Kindred keeps its files, how it logs, and in which mode it runs."""

    model_config = section_config()

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

    model_config = section_config()

    database_url: str | None = Field(
        default=None, validation_alias=env_names("DATABASE_URL", "KINDRED_DATABASE_URL")
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

    model_config = section_config()

    persona: str = DEFAULT_PERSONA
    # The admin's personas ([personal] 2); unset: personas.toml in the data directory, if it exists.
    personas_file: Path | None = None
    # The admin's budgets ([personal] 1); unset: budgets.toml in the data directory, if it exists.
    budgets_file: Path | None = None
    max_new_tokens: int = Field(default=_CONVERSATION.max_new_tokens, ge=1, le=8192)
    recent_turns: int = Field(default=_CONVERSATION.recent_turns, ge=0, le=200)
    max_message_chars: int = Field(default=_CONVERSATION.max_message_chars, ge=1)
    reactions: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_REACTIONS))
    # Platform-qualified ids, comma-separated: telegram:42, discord:1234, discord-guild:99,
    # telegram-chat:-100…. Unset: everyone may talk.
    allowed_ids: str | None = None
    admin_ids: str = ""
    # on: people the allowlist leaves out may talk too, on the guests' budget (budgets.toml).
    guests: bool = False
    # Per person; 0 turns limiting off. The burst lets someone send a few lines at once.
    user_messages_per_minute: float = Field(default=20.0, ge=0)
    user_message_burst: int = Field(default=5, ge=1)

    @field_validator("persona")
    @classmethod
    def _persona_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()


class MemorySettings(BaseSettings):
    """Recall, reward, decay and the memory jobs (KINDRED_MEMORY_*, and the reward weights)."""

    model_config = section_config("KINDRED_MEMORY_")

    top_k: int = Field(default=_CONVERSATION.memory_top_k, ge=0, le=100)
    token_budget: int = Field(default=_CONVERSATION.memory_token_budget, ge=0)
    # How fast each kind of memory fades, as a half-life in days (JSON); 0: it never fades.
    # A kind not named here fades like a turn.
    half_life_days: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_HALF_LIVES))
    # How much the assistant's own words count beside the person's (1: alike, 0: never recalled first).
    assistant_weight: float = Field(default=_SCORING.assistant_weight, ge=0, le=1)
    # How much a passage of a file the person shared counts beside their own words (1: alike).
    document_weight: float = Field(default=_SCORING.document_weight, ge=0, le=1)
    # How far reward, age and verification move a memory: relevance × (1 + mix·(w − ½)).
    weight_mix: float = Field(default=_SCORING.mix, ge=0, le=2)
    # A memory whose normalised reward is above this is kept in context first.
    favoured_reward: float = Field(default=_SCORING.favoured_reward, ge=0, le=1)
    # The reward of a reply: R = α·tool uses + β·turns that followed + γ·proactive successes + reaction.
    reward_alpha: float = Field(default=_REWARD.alpha, validation_alias=env_names("KINDRED_REWARD_ALPHA"))
    reward_beta: float = Field(default=_REWARD.beta, validation_alias=env_names("KINDRED_REWARD_BETA"))
    reward_gamma: float = Field(default=_REWARD.gamma, validation_alias=env_names("KINDRED_REWARD_GAMMA"))
    # A pause longer than this ends the session whose turns count towards β.
    session_gap_minutes: float = Field(
        default=_REWARD.session_gap.total_seconds() / 60,
        gt=0,
        validation_alias=env_names("KINDRED_SESSION_GAP_MINUTES"),
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

    model_config = section_config()

    redis_url: str | None = Field(default=None, validation_alias=env_names("REDIS_URL"))
    # Jobs go to Celery workers when REDIS_URL is set; otherwise they run on this many threads here.
    job_threads: int = Field(default=2, ge=1, le=64)
    # Unset: longer than the longest job's hard limit, so a long job is never delivered twice.
    visibility_timeout_s: float | None = Field(default=None, gt=0)
    # A job whose worker died this many times while running it (killed: out of memory, say) is
    # refused at its next delivery and recorded failed; `kindred requeue ID` runs it again.
    job_max_worker_deaths: int = Field(default=2, ge=1, le=100)
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


class SharedStateSettings(BaseSettings):
    """What bot replicas share (webhook intake, rate limits, flood control): Redis, or this process."""

    model_config = section_config("KINDRED_SHARED_")

    # redis://…; "local": this process only (one replica). Unset: REDIS_URL when set, else local.
    state_url: str | None = Field(default=None, validation_alias=env_names("KINDRED_SHARED_STATE_URL"))
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

    model_config = section_config("KINDRED_WEB_")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    # HTTP basic auth for /admin (any user name); unset: /admin is not served.
    admin_password: SecretStr | None = Field(
        default=None, validation_alias=env_names("KINDRED_ADMIN_PASSWORD")
    )
    # Mini-apps: the origin their links use (another host than /admin's keeps them apart; unset:
    # this server's own address), builds at once per person, the model's pass, and each app's state.
    apps_url: str | None = Field(default=None, validation_alias=env_names("KINDRED_APPS_URL"))
    app_builds_per_person: int = Field(
        default=2, ge=1, le=20, validation_alias=env_names("KINDRED_APP_BUILDS_PER_PERSON")
    )
    app_model_pass: bool = Field(default=True, validation_alias=env_names("KINDRED_APP_MODEL_PASS"))
    # Whether the model writes an app's whole page (through the free-form checks, the template as
    # fallback): "auto" is on only with the OpenAI-compatible backend, a served model that can.
    app_free_form: Literal["auto", "on", "off"] = Field(
        default="auto", validation_alias=env_names("KINDRED_APP_FREE_FORM")
    )
    app_state_bytes: int = Field(
        default=65536, ge=1024, le=1 << 22, validation_alias=env_names("KINDRED_APP_STATE_BYTES")
    )
