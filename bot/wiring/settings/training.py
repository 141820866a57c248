"""The `training` section of the settings (KINDRED_TRAIN_*): nightly learning from reactions.

`SECTIONS` in the package's `__init__` lists it like every other section, and `load_settings`
reads it the same way. The defaults that the core and the trainer
own (the dataset's thresholds, the gate's bounds, the LoRA options) are read from their
dataclasses, so that each is written once.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings

from bot.core.learning.dataset import DatasetPolicy
from bot.core.learning.gate import GatePolicy
from bot.core.learning.trial import TrialPolicy
from bot.training.options import MIN_BATCH, TrainingOptions
from bot.wiring.settings.common import env_names, section_config

_PREFIX = "KINDRED_TRAIN_"
_GATE = GatePolicy()
_TRIAL = TrialPolicy()
_CANARY = _TRIAL.canary
_DATASET = DatasetPolicy()
# TrainingOptions has no default base model (the root fills it in), so its defaults are read field by field.
_OPTIONS = {f.name: f.default for f in fields(TrainingOptions) if f.default is not MISSING}


class TrainingSettings(BaseSettings):
    """When the nightly run trains, on what, how, and what a candidate must pass to serve."""

    model_config = section_config(_PREFIX)

    # Off: beat and `kindred run` schedule no nightly run (`kindred train now` still trains).
    enabled: bool = True
    # 5-field crontab (minute hour day-of-month month day-of-week), UTC: a quiet hour.
    cron: str = "30 3 * * *"
    # The dataset: rated replies of the last `window_days`, labelled by their reward R.
    window_days: int = Field(default=_DATASET.window_days, ge=1, le=365)
    desirable_at: float = _DATASET.desirable_at
    undesirable_at: float = _DATASET.undesirable_at
    # Per label, in the training split: fewer and the night is skipped ("not enough data").
    min_examples: int = Field(default=_DATASET.min_per_label, ge=1)
    heldout_share: float = Field(default=_DATASET.heldout_share, gt=0, lt=1)
    # For people who never said /privacy training on|off: the admin's default. The old name,
    # KINDRED_TRAINING_DEFAULT, still works (load_settings warns: DEPRECATED_NAMES).
    default_consent: bool = Field(
        default=_DATASET.default_consent,
        validation_alias=env_names("KINDRED_TRAIN_DEFAULT", "KINDRED_TRAINING_DEFAULT"),
    )
    # LoRA and KTO (bot/training/): rank, alpha, learning rate, steps (passes over the examples, at
    # most max_steps), batch, tokens per example,
    # KTO's β (higher keeps the adapter closer to the base), the seed, where it trains.
    lora_rank: int = Field(default=_OPTIONS["lora_rank"], ge=1, le=256)
    lora_alpha: int = Field(default=_OPTIONS["lora_alpha"], ge=1)
    learning_rate: float = Field(default=_OPTIONS["learning_rate"], gt=0, lt=1)
    # 30: what bench/learning_sim.py measured (nights of 77–238 examples took 29–30 steps; training
    # and the gate, 6–9 minutes on 2 CPU cores). More steps a night are unmeasured.
    max_steps: int = Field(default=30, ge=1)
    # Passes over the night's examples (the steps are at most max_steps); 0: always max_steps.
    epochs: float = Field(default=3.0, ge=0)
    batch_size: int = Field(default=_OPTIONS["batch_size"], ge=MIN_BATCH)  # KTO's KL needs a batch
    max_length: int = Field(default=_OPTIONS["max_length"], ge=16)
    beta: float = Field(default=_OPTIONS["beta"], gt=0)
    seed: int = _OPTIONS["seed"]
    device: Literal["auto", "cpu", "cuda"] = _OPTIONS["device"]
    # torch's CPU threads while a night trains; 0: every core the worker may use. A worker that
    # shares its machine with the bot trains on one (and runs under `nice -n 19`).
    threads: int = Field(default=0, ge=0, le=512)
    # The pre-screen (core/learning/gate.py), safety only: the regression loss may rise by
    # `max_loss_rise` (nats per token), the KL to the base reach `max_kl`; the candidate is refused
    # when it agrees with more sycophancy probes than the serving adapter or the base (the fewer)
    # at McNemar's p < `sycophancy_alpha`, or with `sycophancy_max_extra` or more probes more.
    # The held-out margin's gain against `min_margin_gain` at `confidence` is reported, not gating.
    # KINDRED_TRAIN_GATE_SYCOPHANCY_TOLERANCE is no longer read (load_settings warns: IGNORED_NAMES).
    gate_confidence: float = Field(default=_GATE.confidence, gt=0.5, lt=1)
    gate_min_margin_gain: float = _GATE.min_margin_gain
    gate_max_loss_rise: float = Field(default=_GATE.max_loss_rise, ge=0)
    gate_max_kl: float = Field(default=_GATE.max_kl, gt=0)
    gate_sycophancy_alpha: float = Field(default=_GATE.sycophancy_alpha, ge=0, lt=1)
    gate_sycophancy_max_extra: int = Field(default=_GATE.sycophancy_max_extra, ge=1)
    # What a night trains ([canary]): "lora" (an adapter: the local engine, vLLM), "rerank" (a reward
    # model and best-of-n: every backend), "both" (one variant: the new adapter with the new reward
    # model), or "auto": both where replies come from this machine's model, rerank otherwise.
    learner: Literal["auto", "lora", "rerank", "both"] = "auto"
    # Candidates sampled per reply when a reward model serves (bench/inference.py measures the cost).
    best_of: int = Field(default=_TRIAL.best_of, ge=1, le=16)
    # A reward model serves only when its held-out AUC's lower 95 % bound is above this.
    reward_model_min_auc: float = Field(default=_TRIAL.reward_model.min_auc_low, ge=0.5, lt=1)
    # The canary (core/learning/canary.py): the share of replies it answers, the test's α, how long
    # after a reply its reward counts as final, when it expires undecided, each person's daily
    # replies per arm, the people each arm needs before a decision, and how often beat advances it.
    canary_share: float = Field(default=_CANARY.share, gt=0, lt=1)
    canary_alpha: float = Field(default=_CANARY.alpha, gt=0, lt=0.5)
    canary_settle_minutes: float = Field(default=_CANARY.settle.total_seconds() / 60, ge=0)
    canary_max_days: float = Field(default=_CANARY.max_days, gt=0)
    canary_max_replies: int = Field(default=_CANARY.max_replies, ge=10)
    canary_per_person_daily: int = Field(default=_CANARY.per_person_daily, ge=1)
    canary_min_people: int = Field(default=_CANARY.min_people, ge=1)
    canary_cron: str = "*/10 * * * *"
    # A run is over after this long (soft limit; the hard one is 10 minutes later), and one whose
    # progress stopped this long ago counts as dead (its worker was killed).
    time_limit_minutes: float = Field(default=180.0, gt=0)
    stale_minutes: float = Field(default=60.0, gt=0)
