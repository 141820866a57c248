"""The settings' environment names: every one that Kindred read before the settings had sections
still sets the same thing, each new one is listed, and no other spelling does."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.core.errors import ConfigError
from bot.wiring.settings import SECTIONS, Settings, env_name, load_settings, secret_values

Read = Callable[[Settings], Any]


def secret(value: Any) -> Any:
    return value.get_secret_value() if value is not None else None


# (variable, a value, where it lands, what it reads back as): every name of the flat settings.
NAMES: list[tuple[str, str, Read, Any]] = [
    ("DATABASE_URL", "sqlite:///a.db", lambda s: s.store.database_url, "sqlite:///a.db"),
    ("KINDRED_DATABASE_URL", "sqlite:///b.db", lambda s: s.store.database_url, "sqlite:///b.db"),
    ("KINDRED_SQLITE_BUSY_TIMEOUT_MS", "7", lambda s: s.store.sqlite_busy_timeout_ms, 7),
    ("REDIS_URL", "redis://h:1/2", lambda s: s.workers.redis_url, "redis://h:1/2"),
    ("TELEGRAM_BOT_TOKEN", "1:abc", lambda s: secret(s.telegram.bot_token), "1:abc"),
    ("TELEGRAM_API_BASE_URL", "http://t/bot", lambda s: s.telegram.api_base_url, "http://t/bot"),
    ("KINDRED_TELEGRAM_API_BASE_URL", "http://u/bot", lambda s: s.telegram.api_base_url, "http://u/bot"),
    ("TELEGRAM_WEBHOOK_URL", "https://w/h", lambda s: s.telegram.webhook_url, "https://w/h"),
    ("KINDRED_TELEGRAM_WEBHOOK_URL", "https://x/h", lambda s: s.telegram.webhook_url, "https://x/h"),
    ("TELEGRAM_WEBHOOK_SECRET", "s3cret!", lambda s: secret(s.telegram.webhook_secret), "s3cret!"),
    ("KINDRED_TELEGRAM_WEBHOOK_SECRET", "s4cret!", lambda s: secret(s.telegram.webhook_secret), "s4cret!"),
    ("KINDRED_TELEGRAM_GROUP_MODE", "all", lambda s: s.telegram.group_mode, "all"),
    ("KINDRED_TELEGRAM_FEEDBACK_BUTTONS", "false", lambda s: s.telegram.feedback_buttons, False),
    ("KINDRED_TELEGRAM_SENDS_PER_SECOND", "99", lambda s: s.telegram.sends_per_second, 99.0),
    ("DISCORD_BOT_TOKEN", "d-token", lambda s: secret(s.discord.bot_token), "d-token"),
    ("DISCORD_DEV_GUILD_ID", "12", lambda s: s.discord.dev_guild_id, 12),
    ("KINDRED_DISCORD_DEV_GUILD_ID", "13", lambda s: s.discord.dev_guild_id, 13),
    ("KINDRED_DISCORD_FEEDBACK_BUTTONS", "false", lambda s: s.discord.feedback_buttons, False),
    ("KINDRED_DISCORD_MESSAGE_CONTENT", "true", lambda s: s.discord.message_content, True),
    ("KINDRED_ALLOWED_IDS", "telegram:1", lambda s: s.chat.allowed_ids, "telegram:1"),
    ("KINDRED_ADMIN_IDS", "telegram:2", lambda s: s.chat.admin_ids, "telegram:2"),
    ("KINDRED_USER_MESSAGES_PER_MINUTE", "3", lambda s: s.chat.user_messages_per_minute, 3.0),
    ("KINDRED_USER_MESSAGE_BURST", "4", lambda s: s.chat.user_message_burst, 4),
    ("KINDRED_PERSONA", "Be brief.", lambda s: s.chat.persona, "Be brief."),
    ("KINDRED_PERSONAS_FILE", "/srv/p.toml", lambda s: s.chat.personas_file, Path("/srv/p.toml")),
    ("KINDRED_BUDGETS_FILE", "/srv/b.toml", lambda s: s.chat.budgets_file, Path("/srv/b.toml")),
    ("KINDRED_GUESTS", "on", lambda s: s.chat.guests, True),
    ("KINDRED_MODELS_FILE", "/srv/m.toml", lambda s: s.inference.models_file, Path("/srv/m.toml")),
    ("KINDRED_MAX_NEW_TOKENS", "50", lambda s: s.chat.max_new_tokens, 50),
    ("KINDRED_RECENT_TURNS", "3", lambda s: s.chat.recent_turns, 3),
    ("KINDRED_MAX_MESSAGE_CHARS", "500", lambda s: s.chat.max_message_chars, 500),
    ("KINDRED_REACTIONS", '{"🙂": 0.5}', lambda s: s.chat.reactions, {"🙂": 0.5}),
    ("KINDRED_WEB_HOST", "0.0.0.0", lambda s: s.web.host, "0.0.0.0"),
    ("KINDRED_WEB_PORT", "81", lambda s: s.web.port, 81),
    ("KINDRED_ADMIN_PASSWORD", "adm1n-pw", lambda s: secret(s.web.admin_password), "adm1n-pw"),
    ("KINDRED_APPS_URL", "https://apps.example", lambda s: s.web.apps_url, "https://apps.example"),
    ("KINDRED_APP_BUILDS_PER_PERSON", "3", lambda s: s.web.app_builds_per_person, 3),
    ("KINDRED_APP_MODEL_PASS", "false", lambda s: s.web.app_model_pass, False),
    ("KINDRED_APP_FREE_FORM", "on", lambda s: s.web.app_free_form, "on"),
    ("KINDRED_APP_STATE_BYTES", "4096", lambda s: s.web.app_state_bytes, 4096),
    ("KINDRED_DATA_DIR", "/tmp/kd", lambda s: s.data_dir, Path("/tmp/kd")),
    ("KINDRED_LOG_LEVEL", "DEBUG", lambda s: s.general.log_level, "DEBUG"),
    ("KINDRED_ENV", "development", lambda s: s.general.env, "development"),
    ("KINDRED_START_ATTEMPTS", "3", lambda s: s.general.start_attempts, 3),
    ("KINDRED_START_BACKOFF_S", "0.5", lambda s: s.general.start_backoff_s, 0.5),
    ("KINDRED_MODEL", "some/model", lambda s: s.inference.model, "some/model"),
    ("KINDRED_EMBEDDING_MODEL", "some/embedder", lambda s: s.inference.embedding_model, "some/embedder"),
    ("KINDRED_DEVICE", "cpu", lambda s: s.inference.device, "cpu"),
    ("KINDRED_GENERATION_TIMEOUT_S", "9", lambda s: s.inference.generation_timeout_s, 9.0),
    ("KINDRED_INFERENCE_BACKEND", "celery", lambda s: s.inference.backend, "celery"),
    ("KINDRED_INFERENCE_WAIT_S", "8", lambda s: s.inference.wait_s, 8.0),
    ("KINDRED_INFERENCE_RECHECK_S", "2.5", lambda s: s.inference.recheck_s, 2.5),
    ("KINDRED_INFERENCE_BATCH_SIZE", "2", lambda s: s.inference.batch_size, 2),
    ("KINDRED_TORCH_THREADS", "2", lambda s: s.inference.torch_threads, 2),
    ("KINDRED_ADAPTERS_DIR", "/tmp/ad", lambda s: s.adapters_path, Path("/tmp/ad")),
    ("KINDRED_LOAD_LORA", "true", lambda s: s.inference.load_lora, True),
    ("KINDRED_OPENAI_LORA_ROOT", "/srv/ad", lambda s: s.inference.openai_lora_root, "/srv/ad"),
    ("KINDRED_OPENAI_BASE_URL", "http://o:1/v1", lambda s: s.inference.openai_base_url, "http://o:1/v1"),
    ("KINDRED_OPENAI_API_KEY", "sk-x", lambda s: secret(s.inference.openai_api_key), "sk-x"),
    ("KINDRED_OPENAI_MODEL", "m", lambda s: s.inference.openai_model, "m"),
    ("KINDRED_OPENAI_TOKENIZER", "bundled", lambda s: s.inference.openai_tokenizer, "bundled"),
    ("KINDRED_OPENAI_CONTEXT_WINDOW", "4096", lambda s: s.inference.openai_context_window, 4096),
    ("KINDRED_MEMORY_TOP_K", "7", lambda s: s.memory.top_k, 7),
    ("KINDRED_MEMORY_TOKEN_BUDGET", "300", lambda s: s.memory.token_budget, 300),
    ("KINDRED_MEMORY_HALF_LIFE_DAYS", '{"turn": 3}', lambda s: s.memory.half_life_days, {"turn": 3.0}),
    ("KINDRED_MEMORY_ASSISTANT_WEIGHT", "0.5", lambda s: s.memory.assistant_weight, 0.5),
    ("KINDRED_MEMORY_WEIGHT_MIX", "0.3", lambda s: s.memory.weight_mix, 0.3),
    ("KINDRED_MEMORY_FAVOURED_REWARD", "0.6", lambda s: s.memory.favoured_reward, 0.6),
    ("KINDRED_MEMORY_EXTRACTION_MODEL", "false", lambda s: s.memory.extraction_model, False),
    ("KINDRED_MEMORY_CONSOLIDATE_AFTER_DAYS", "3", lambda s: s.memory.consolidate_after_days, 3.0),
    ("KINDRED_MEMORY_BUDGET", "20", lambda s: s.memory.budget, 20),
    ("KINDRED_REWARD_ALPHA", "2", lambda s: s.memory.reward_alpha, 2.0),
    ("KINDRED_REWARD_BETA", "0.2", lambda s: s.memory.reward_beta, 0.2),
    ("KINDRED_REWARD_GAMMA", "3", lambda s: s.memory.reward_gamma, 3.0),
    ("KINDRED_SESSION_GAP_MINUTES", "5", lambda s: s.memory.session_gap_minutes, 5.0),
    ("KINDRED_MEMORY_UPKEEP_CRON", "1 2 * * *", lambda s: s.workers.memory_upkeep_cron, "1 2 * * *"),
    ("KINDRED_UPKEEP_CRON", "3 4 * * *", lambda s: s.workers.upkeep_cron, "3 4 * * *"),
    ("KINDRED_PROACTIVE_CRON", "*/2 * * * *", lambda s: s.workers.proactive_cron, "*/2 * * * *"),
    ("KINDRED_JOB_THREADS", "3", lambda s: s.workers.job_threads, 3),
    ("KINDRED_VISIBILITY_TIMEOUT_S", "99", lambda s: s.workers.visibility_timeout_s, 99.0),
    ("KINDRED_JOB_MAX_WORKER_DEATHS", "5", lambda s: s.workers.job_max_worker_deaths, 5),
    ("KINDRED_BEAT_LOCK_TTL_S", "30", lambda s: s.workers.beat_lock_ttl_s, 30),
    ("KINDRED_FLOWER_USER", "admin", lambda s: s.workers.flower_user, "admin"),
    ("KINDRED_FLOWER_PASSWORD", "fl0wer-pw", lambda s: secret(s.workers.flower_password), "fl0wer-pw"),
    ("KINDRED_FLOWER_PORT", "5556", lambda s: s.workers.flower_port, 5556),
    ("KINDRED_FLOWER_URL", "http://f", lambda s: s.workers.flower_url, "http://f"),
    # Added since the sections: new names, never spelled another way.
    ("KINDRED_TEMPERATURE", "0", lambda s: s.inference.temperature, 0.0),
    ("KINDRED_EMBEDDING_RUNTIME", "torch", lambda s: s.inference.embedding_runtime, "torch"),
    # [rooms]: embeddings from an OpenAI-compatible server (a base install, no torch).
    ("KINDRED_EMBEDDING_URL", "http://e:1/v1", lambda s: s.inference.embedding_url, "http://e:1/v1"),
    ("KINDRED_EMBEDDING_API_KEY", "sk-e", lambda s: secret(s.inference.embedding_api_key), "sk-e"),
    ("KINDRED_EMBEDDING_DIM", "768", lambda s: s.inference.embedding_dim, 768),
    ("KINDRED_EMBEDDING_TIMEOUT_S", "5", lambda s: s.inference.embedding_timeout_s, 5.0),
    ("KINDRED_EMBEDDING_BATCH_SIZE", "8", lambda s: s.inference.embedding_batch_size, 8),
    # [learning]: the nightly run.
    ("KINDRED_TRAIN_ENABLED", "off", lambda s: s.training.enabled, False),
    ("KINDRED_TRAIN_CRON", "0 2 * * *", lambda s: s.training.cron, "0 2 * * *"),
    ("KINDRED_TRAIN_WINDOW_DAYS", "7", lambda s: s.training.window_days, 7),
    ("KINDRED_TRAIN_DESIRABLE_AT", "0.8", lambda s: s.training.desirable_at, 0.8),
    ("KINDRED_TRAIN_UNDESIRABLE_AT", "-0.8", lambda s: s.training.undesirable_at, -0.8),
    ("KINDRED_TRAIN_MIN_EXAMPLES", "9", lambda s: s.training.min_examples, 9),
    ("KINDRED_TRAIN_HELDOUT_SHARE", "0.4", lambda s: s.training.heldout_share, 0.4),
    ("KINDRED_TRAIN_DEFAULT", "off", lambda s: s.training.default_consent, False),
    ("KINDRED_TRAIN_LORA_RANK", "4", lambda s: s.training.lora_rank, 4),
    ("KINDRED_TRAIN_LORA_ALPHA", "5", lambda s: s.training.lora_alpha, 5),
    ("KINDRED_TRAIN_LEARNING_RATE", "0.001", lambda s: s.training.learning_rate, 0.001),
    ("KINDRED_TRAIN_MAX_STEPS", "3", lambda s: s.training.max_steps, 3),
    ("KINDRED_TRAIN_EPOCHS", "1.5", lambda s: s.training.epochs, 1.5),
    ("KINDRED_TRAIN_BATCH_SIZE", "4", lambda s: s.training.batch_size, 4),
    ("KINDRED_TRAIN_MAX_LENGTH", "64", lambda s: s.training.max_length, 64),
    ("KINDRED_TRAIN_BETA", "0.2", lambda s: s.training.beta, 0.2),
    ("KINDRED_TRAIN_SEED", "7", lambda s: s.training.seed, 7),
    ("KINDRED_TRAIN_DEVICE", "cpu", lambda s: s.training.device, "cpu"),
    ("KINDRED_TRAIN_THREADS", "1", lambda s: s.training.threads, 1),
    ("KINDRED_TRAIN_GATE_CONFIDENCE", "0.95", lambda s: s.training.gate_confidence, 0.95),
    ("KINDRED_TRAIN_GATE_MIN_MARGIN_GAIN", "0.1", lambda s: s.training.gate_min_margin_gain, 0.1),
    ("KINDRED_TRAIN_GATE_MAX_LOSS_RISE", "0.2", lambda s: s.training.gate_max_loss_rise, 0.2),
    ("KINDRED_TRAIN_GATE_MAX_KL", "0.9", lambda s: s.training.gate_max_kl, 0.9),
    ("KINDRED_TRAIN_GATE_SYCOPHANCY_ALPHA", "0.01", lambda s: s.training.gate_sycophancy_alpha, 0.01),
    ("KINDRED_TRAIN_GATE_SYCOPHANCY_MAX_EXTRA", "8", lambda s: s.training.gate_sycophancy_max_extra, 8),
    ("KINDRED_TRAIN_TIME_LIMIT_MINUTES", "30", lambda s: s.training.time_limit_minutes, 30.0),
    ("KINDRED_TRAIN_STALE_MINUTES", "20", lambda s: s.training.stale_minutes, 20.0),
    # [canary]: what a night trains, best-of-n, and the canary.
    ("KINDRED_TRAIN_LEARNER", "rerank", lambda s: s.training.learner, "rerank"),
    ("KINDRED_TRAIN_BEST_OF", "8", lambda s: s.training.best_of, 8),
    ("KINDRED_TRAIN_REWARD_MODEL_MIN_AUC", "0.6", lambda s: s.training.reward_model_min_auc, 0.6),
    ("KINDRED_TRAIN_CANARY_SHARE", "0.5", lambda s: s.training.canary_share, 0.5),
    ("KINDRED_TRAIN_CANARY_ALPHA", "0.05", lambda s: s.training.canary_alpha, 0.05),
    ("KINDRED_TRAIN_CANARY_SETTLE_MINUTES", "30", lambda s: s.training.canary_settle_minutes, 30.0),
    ("KINDRED_TRAIN_CANARY_MAX_DAYS", "3", lambda s: s.training.canary_max_days, 3.0),
    ("KINDRED_TRAIN_CANARY_MAX_REPLIES", "900", lambda s: s.training.canary_max_replies, 900),
    ("KINDRED_TRAIN_CANARY_PER_PERSON_DAILY", "5", lambda s: s.training.canary_per_person_daily, 5),
    ("KINDRED_TRAIN_CANARY_MIN_PEOPLE", "2", lambda s: s.training.canary_min_people, 2),
    ("KINDRED_TRAIN_CANARY_CRON", "*/5 * * * *", lambda s: s.training.canary_cron, "*/5 * * * *"),
    # [hardening]: replicas.
    ("KINDRED_SHARED_STATE_URL", "redis://r:1/2", lambda s: s.shared_state_url, "redis://r:1/2"),
    ("KINDRED_SHARED_LEASE_S", "12", lambda s: s.shared.lease_s, 12.0),
    ("KINDRED_RUN_PLATFORMS", "telegram", lambda s: s.general.run_platforms, "telegram"),
    ("KINDRED_TELEGRAM_WEBHOOK_ANSWER_S", "3", lambda s: s.telegram.webhook_answer_s, 3.0),
    # [media]: documents.
    ("KINDRED_MEMORY_DOCUMENT_WEIGHT", "0.9", lambda s: s.memory.document_weight, 0.9),
    ("KINDRED_DOCUMENT_MAX_BYTES", "1000", lambda s: s.documents.max_bytes, 1000),
    ("KINDRED_DOCUMENT_MAX_PAGES", "40", lambda s: s.documents.max_pages, 40),
    ("KINDRED_DOCUMENT_PASSAGE_CHARS", "300", lambda s: s.documents.passage_chars, 300),
    ("KINDRED_DOCUMENT_MAX_PASSAGES_PER_PERSON", "90", lambda s: s.documents.max_passages_per_person, 90),
    ("KINDRED_DOCUMENT_MAX_SECONDS", "5", lambda s: s.documents.max_seconds, 5.0),
    ("KINDRED_DOCUMENT_JOB_BYTES", "4096", lambda s: s.documents.job_bytes, 4096),
    ("KINDRED_DOCUMENT_JOB_PAGES", "9", lambda s: s.documents.job_pages, 9),
    # [media]: voice notes and audio.
    ("KINDRED_SPEECH_API_KEY", "sk-s", lambda s: secret(s.speech.speech_api_key), "sk-s"),
    ("KINDRED_SPEECH_TIMEOUT_S", "9", lambda s: s.speech.speech_timeout_s, 9.0),
    ("KINDRED_SPEECH_FORMAT", "json", lambda s: s.speech.speech_format, "json"),
    ("KINDRED_SPEECH_ECHO", "on", lambda s: s.speech.speech_echo, True),
    ("KINDRED_AUDIO_MAX_MB", "50", lambda s: s.speech.audio_max_bytes, 50 * 1024 * 1024),
    ("KINDRED_AUDIO_MAX_SECONDS", "120", lambda s: s.speech.audio_max_seconds, 120.0),
    ("KINDRED_AUDIO_INLINE_SECONDS", "30", lambda s: s.speech.audio_inline_seconds, 30.0),
    # [media]: photos and images.
    ("KINDRED_VISION_BACKEND", "openai", lambda s: s.vision.vision_backend, "openai"),
    (
        "KINDRED_VISION_URL",
        "http://127.0.0.1:11434/v1",
        lambda s: s.vision.vision_url,
        "http://127.0.0.1:11434/v1",
    ),
    ("KINDRED_VISION_MODEL", "llava:7b", lambda s: s.vision.vision_model, "llava:7b"),
    ("KINDRED_VISION_API_KEY", "sk-v", lambda s: secret(s.vision.vision_api_key), "sk-v"),
    ("KINDRED_VISION_TIMEOUT_S", "9", lambda s: s.vision.vision_timeout_s, 9.0),
    ("KINDRED_IMAGE_MAX_MB", "4", lambda s: s.vision.image_max_bytes, 4 * 1024 * 1024),
    ("KINDRED_IMAGE_MAX_MEGAPIXELS", "12", lambda s: s.vision.image_max_megapixels, 12.0),
    ("KINDRED_IMAGE_MAX_SIDE", "1024", lambda s: s.vision.image_max_side, 1024),
    ("KINDRED_TTS_VOICE", "en-gb", lambda s: s.tts.tts_voice, "en-gb"),
    ("KINDRED_TTS_API_KEY", "sk-t", lambda s: secret(s.tts.tts_api_key), "sk-t"),
    ("KINDRED_TTS_FORMAT", "wav", lambda s: s.tts.tts_format, "wav"),
    ("KINDRED_TTS_TIMEOUT_S", "9", lambda s: s.tts.tts_timeout_s, 9.0),
    ("KINDRED_TTS_MAX_CHARS", "300", lambda s: s.tts.tts_max_chars, 300),
]
# Names that take effect only with others, each tested on its own below.
SET_WITH_OTHERS = {
    "KINDRED_EMBEDDING_BACKEND", "KINDRED_SPEECH_BACKEND", "KINDRED_SPEECH_URL", "KINDRED_SPEECH_MODEL",
    "KINDRED_TTS_BACKEND", "KINDRED_TTS_URL", "KINDRED_TTS_MODEL",
}  # fmt: skip
# Spellings that the sections' prefixes would make up for a field that names its own variable.
NOT_NAMES = [
    "KINDRED_BACKEND",
    "KINDRED_WAIT_S",
    "KINDRED_BATCH_SIZE",
    "KINDRED_MEMORY_REWARD_ALPHA",
    "KINDRED_MEMORY_SESSION_GAP_MINUTES",
    "KINDRED_WEB_ADMIN_PASSWORD",
    "KINDRED_TELEGRAM_BOT_TOKEN",
    "KINDRED_DISCORD_BOT_TOKEN",
    "KINDRED_REDIS_URL",
    "KINDRED_TRAIN_DEFAULT_CONSENT",
]


@pytest.fixture(autouse=True)
def no_kindred_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(("KINDRED_", "TELEGRAM_", "DISCORD_")) or name in ("DATABASE_URL", "REDIS_URL"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize(("name", "value", "read", "expected"), NAMES, ids=[n[0] for n in NAMES])
def test_every_variable_sets_its_setting(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, read: Read, expected: Any
) -> None:
    before = read(load_settings(env_file=None))
    monkeypatch.setenv(name, value)
    after = read(load_settings(env_file=None))
    assert after == expected and after != before


def test_every_setting_has_one_of_the_names_above() -> None:
    """A new setting needs a row in NAMES: its name is part of every deployment's configuration."""
    listed = {name for name, *_ in NAMES} | SET_WITH_OTHERS
    for section in SECTIONS.values():
        for field in section.model_fields:
            assert env_name(section, field) in listed, f"{section.__name__}.{field}"


@pytest.mark.parametrize("name", NOT_NAMES)
def test_made_up_spellings_set_nothing(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    defaults = load_settings(env_file=None)
    monkeypatch.setenv(name, "celery" if "BACKEND" in name else "7")
    assert load_settings(env_file=None) == defaults


def test_an_old_name_still_works_and_says_its_new_one(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("KINDRED_TRAINING_DEFAULT", "off")
    with pytest.warns(DeprecationWarning, match="TRAINING_DEFAULT .* rename it KINDRED_TRAIN_DEFAULT"):
        settings = load_settings(env_file=None)
    assert settings.training.default_consent is False
    assert "rename it KINDRED_TRAIN_DEFAULT" in caplog.text


def test_an_old_name_in_a_dot_env_file_warns_too(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("KINDRED_TRAINING_DEFAULT=off\n")
    with pytest.warns(DeprecationWarning, match="KINDRED_TRAINING_DEFAULT"):
        assert load_settings(env_file=env).training.default_consent is False


def test_the_new_name_wins_over_the_old_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDRED_TRAINING_DEFAULT", "off")
    monkeypatch.setenv("KINDRED_TRAIN_DEFAULT", "on")
    with pytest.warns(DeprecationWarning):
        assert load_settings(env_file=None).training.default_consent is True


def test_the_new_name_alone_warns_of_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDRED_TRAIN_DEFAULT", "off")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert load_settings(env_file=None).training.default_consent is False


def test_a_retired_name_is_accepted_ignored_and_says_what_replaced_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    defaults = load_settings(env_file=None)
    monkeypatch.setenv("KINDRED_TRAIN_GATE_SYCOPHANCY_TOLERANCE", "0.1")
    with pytest.warns(DeprecationWarning, match="SYCOPHANCY_TOLERANCE is deprecated and ignored"):
        settings = load_settings(env_file=None)
    assert settings == defaults
    assert "KINDRED_TRAIN_GATE_SYCOPHANCY_MAX_EXTRA" in caplog.text


def test_the_openai_embedding_backend_is_chosen_with_its_url_and_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KINDRED_EMBEDDING_BACKEND", "openai")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_EMBEDDING_MODEL: is required"):
        load_settings(env_file=None)
    monkeypatch.setenv("KINDRED_EMBEDDING_MODEL", "nomic-embed-text")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_EMBEDDING_URL: is required"):
        load_settings(env_file=None)
    monkeypatch.setenv("KINDRED_EMBEDDING_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("KINDRED_EMBEDDING_API_KEY", "sk-embed-xyz")
    settings = load_settings(env_file=None)
    assert settings.inference.embedding_backend == "openai"
    assert "sk-embed-xyz" in secret_values(settings)  # redacted from every log line


def test_the_openai_speech_backend_is_chosen_with_its_url_and_model(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(env_file=None).speech.speech_backend == "none"  # off unless an admin turns it on
    monkeypatch.setenv("KINDRED_SPEECH_BACKEND", "openai")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_SPEECH_URL: is required"):
        load_settings(env_file=None)
    monkeypatch.setenv("KINDRED_SPEECH_URL", "http://localhost:8000/v1")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_SPEECH_MODEL: is required"):
        load_settings(env_file=None)
    monkeypatch.setenv("KINDRED_SPEECH_MODEL", "whisper-1")
    monkeypatch.setenv("KINDRED_SPEECH_API_KEY", "sk-speech-xyz")
    settings = load_settings(env_file=None)
    assert (settings.speech.speech_url, settings.speech.speech_model) == (
        "http://localhost:8000/v1",
        "whisper-1",
    )
    assert "sk-speech-xyz" in secret_values(settings)  # redacted from every log line
    monkeypatch.setenv("KINDRED_SPEECH_URL", "localhost:8000")
    with pytest.raises(
        ConfigError, match=r"^invalid configuration: KINDRED_SPEECH_URL: must start with http"
    ):
        load_settings(env_file=None)


def test_an_invalid_value_is_named_by_the_variable_that_holds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDRED_REWARD_ALPHA", "lots")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_REWARD_ALPHA: ") as raised:
        load_settings(env_file=None)
    assert "lots" not in str(raised.value)


def test_a_dot_env_file_is_read_when_given(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("KINDRED_MEMORY_BUDGET=42\nREDIS_URL=redis://e:1/0\n")
    settings = load_settings(env_file=env)
    assert settings.memory.budget == 42 and settings.workers.redis_url == "redis://e:1/0"
    assert load_settings(env_file=None).memory.budget != 42


def test_replicas_share_state_in_redis_url_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(env_file=None).shared_state_url is None, "one process: its own state"
    monkeypatch.setenv("REDIS_URL", "redis://broker:6379/0")
    assert load_settings(env_file=None).shared_state_url == "redis://broker:6379/0"
    monkeypatch.setenv("KINDRED_SHARED_STATE_URL", "local")
    assert load_settings(env_file=None).shared_state_url is None
    monkeypatch.setenv("KINDRED_SHARED_STATE_URL", "http://not-redis")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_SHARED_STATE_URL: "):
        load_settings(env_file=None)


def test_run_serves_the_platforms_it_is_told_to(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(env_file=None).general.serves("discord"), "unset: every platform"
    monkeypatch.setenv("KINDRED_RUN_PLATFORMS", " telegram, ")
    general = load_settings(env_file=None).general
    assert general.serves("telegram") and not general.serves("discord")
    monkeypatch.setenv("KINDRED_RUN_PLATFORMS", "telegram,slack")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_RUN_PLATFORMS: "):
        load_settings(env_file=None)


def test_adapters_live_under_the_data_dir_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local engine, the trainer and vLLM's loader read one folder: in the data volume."""
    monkeypatch.setenv("KINDRED_DATA_DIR", "/srv/kindred")
    assert load_settings(env_file=None).adapters_path == Path("/srv/kindred/adapters")


def test_the_tts_backend_openai_needs_its_url_and_model_and_espeak_needs_neither(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings(env_file=None).tts.tts_backend == "none"
    monkeypatch.setenv("KINDRED_TTS_BACKEND", "openai")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_TTS_URL: is required"):
        load_settings(env_file=None)
    monkeypatch.setenv("KINDRED_TTS_URL", "http://localhost:8000/v1")
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_TTS_MODEL: is required"):
        load_settings(env_file=None)
    monkeypatch.setenv("KINDRED_TTS_MODEL", "tts-1")
    tts = load_settings(env_file=None).tts
    assert (tts.tts_backend, tts.tts_url, tts.tts_model) == ("openai", "http://localhost:8000/v1", "tts-1")
    monkeypatch.setenv("KINDRED_TTS_BACKEND", "espeak")
    monkeypatch.delenv("KINDRED_TTS_URL")
    monkeypatch.delenv("KINDRED_TTS_MODEL")
    assert load_settings(env_file=None).tts.tts_backend == "espeak"
