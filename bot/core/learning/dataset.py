"""The nightly training set ([learning]): every rated reply of a rolling window, labelled by its
reward R (core/learning/reward.py), with the prompt exactly as the model saw it.

- Rated: at least one reaction, tool use or proactive success (`LearningLog.rated_replies`); the
  turns that followed (β) count in R but rate nothing alone.
- Labels: R ≥ `desirable_at` is desirable, R ≤ `undesirable_at` undesirable; a neutral reply in
  between is left out.
- Privacy: people who switched training off are left out, and so are people who never chose when
  the admin's default is off: their replies, and their reactions on anyone's reply. What was
  forgotten is not in the store any more: its prompts went with it (`MemoryIndex.forget`).
- Held out: the held-out share of each label, picked by a stable hash of the turn id, so a rerun
  splits alike and a rare label is held out in its share too (a plain hash split once held out 3
  of a night's 31 liked replies, too few for the gate to tell its margin from noise).
- Balance, as KTO recommends (w_D·n_D : w_U·n_U within 1 … 4/3): the larger label weighs 1, the
  smaller n_large / n_small, so both weigh the same in the train split.
- Replies cut at the token budget stay, flagged (`TrainingExample.cut`): trained without an end token,
  on the whole sentences that were shown and stored (core/chat/sentences.py).
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from bot.core.chat import as_written
from bot.core.learning.models import ExampleSnapshot, RatedReply, TrainingExample
from bot.core.learning.reward import ReplyReward, RewardWeights, reply_reward
from bot.core.models import Generation, JSONObject
from bot.core.store import Store

log = logging.getLogger(__name__)

Label = Literal["desirable", "undesirable"]
Split = Literal["train", "heldout"]
LABELS: tuple[Label, Label] = ("desirable", "undesirable")
# Why a rated reply is not in the set; `filtered`: another persona's or model's (DatasetPolicy).
LEFT_OUT = ("opted_out", "neutral", "gone", "filtered")


@dataclass(frozen=True, slots=True)
class DatasetPolicy:
    window_days: int = 14
    desirable_at: float = 0.5  # R ≥ this → desirable
    undesirable_at: float = -0.5  # R ≤ this → undesirable; between: neutral, left out
    default_consent: bool = True  # the admin's default for people who never set /privacy training
    # Of each label, by a stable hash of turn_id, so a rerun splits alike. A rare taste leaves few
    # liked replies and the gate needs about ten of each label held out: bench/learning_sim.py's
    # +41.7 points were measured with 0.3.
    heldout_share: float = 0.3
    min_per_label: int = 4  # in the train split, per label, else "not enough data"
    # Only the replies its variant record says this persona, or this base model, wrote (None:
    # any). A reply stored before the record named them matches no filter.
    persona: str | None = None
    model: str | None = None
    # The night's: an adapter trains on its base model's replies, never another model's ([personal]
    # 3); a reply from before the record named its model is the base model's (None: any model).
    trains: str | None = None

    def keeps(self, generation: Generation) -> bool:
        """Whether a reply made so is in this dataset at all (before consent and labels)."""
        others = self.trains is not None and generation.base_model not in ("", self.trains)
        return (
            (self.persona is None or generation.persona == self.persona)
            and not others
            and (self.model is None or generation.base_model == self.model)
        )


@dataclass(frozen=True, slots=True)
class Dataset:
    train: tuple[TrainingExample, ...]
    heldout: tuple[TrainingExample, ...]
    snapshots: tuple[ExampleSnapshot, ...]
    window_start: datetime
    window_end: datetime
    desirable_weight: float
    undesirable_weight: float
    # {"examples": {"desirable": n, "undesirable": n}, "heldout": {...}, "people": n,
    #  "left_out": {"opted_out": n, "neutral": n, "gone": n, "filtered": n},
    #  "only": {"persona": name | None, "model": name | None}, "window_days": d, "window": {...},
    #  "weights": {"desirable": w, "undesirable": w}, "cut": n}
    stats: JSONObject

    def shortfall(self, policy: DatasetPolicy) -> str | None:
        """Why this set is too small to train on, in plain words; None when it is enough."""
        desirable, undesirable = _label_counts(self.train)
        if min(desirable, undesirable) >= policy.min_per_label:
            return None
        days = self.stats.get("window_days", policy.window_days)
        return (
            f"not enough data: {desirable} desirable and {undesirable} undesirable rated replies to "
            f"train on from the last {days} days; each label needs at least {policy.min_per_label}"
        )


@dataclass(frozen=True, slots=True)
class _Labelled:
    reply: RatedReply
    reward: ReplyReward
    label: Label
    split: Split


async def build_dataset(
    store: Store, policy: DatasetPolicy, weights: RewardWeights, now: datetime
) -> Dataset:
    """The night's dataset: the rated replies written in [now − window_days, now)."""
    start, end = now - timedelta(days=policy.window_days), now
    left_out: Counter[str] = Counter()
    labelled: list[tuple[RatedReply, ReplyReward, Label]] = []
    counts = ConsentBook(store, policy)
    for reply in await store.learning.rated_replies(start, end):
        if not policy.keeps(reply.generation):
            left_out["filtered"] += 1
            continue
        if not consents(reply.consent, policy):
            left_out["opted_out"] += 1
            continue
        reward = await reply_reward(store.rewards, reply.turn_id, weights, counts)
        if reward is None:  # forgotten between the two reads
            left_out["gone"] += 1
            continue
        if not (reward.reactions or reward.tool_uses or reward.proactive_successes):
            left_out["opted_out"] += 1  # rated only by people who switched training off
            continue
        found = label(reward.total, policy)
        if found is None:
            left_out["neutral"] += 1
            continue
        labelled.append((reply, reward, found))
    held = heldout_ids([(reply.turn_id, found) for reply, _, found in labelled], policy.heldout_share)
    kept = [
        _Labelled(reply, reward, found, "heldout" if reply.turn_id in held else "train")
        for reply, reward, found in labelled
    ]
    train = tuple(_example(item) for item in kept if item.split == "train")
    heldout = tuple(_example(item) for item in kept if item.split == "heldout")
    desirable_weight, undesirable_weight = balance(*_label_counts(train))
    stats = _stats(
        kept, train, heldout, left_out, policy, (start, end), (desirable_weight, undesirable_weight)
    )
    log.info("dataset %s", stats)
    return Dataset(
        train=train,
        heldout=heldout,
        snapshots=tuple(_snapshot(item) for item in kept),
        window_start=start,
        window_end=end,
        desirable_weight=desirable_weight,
        undesirable_weight=undesirable_weight,
        stats=stats,
    )


def consents(consent: bool | None, policy: DatasetPolicy) -> bool:
    """Whether a person's replies train: their own switch, else the admin's default."""
    return policy.default_consent if consent is None else consent


class ConsentBook:
    """Whether each person's reactions train, read once a night per person: in a group chat, the
    reaction of someone who switched training off must not label another person's reply."""

    def __init__(self, store: Store, policy: DatasetPolicy) -> None:
        self._store = store
        self._policy = policy
        self._known: dict[str, bool] = {}

    async def __call__(self, user_id: str) -> bool:
        if user_id not in self._known:
            self._known[user_id] = consents(
                await self._store.learning.training_consent(user_id), self._policy
            )
        return self._known[user_id]


def label(reward: float, policy: DatasetPolicy) -> Label | None:
    """A reward's label, or None for a neutral reply (left out)."""
    if reward >= policy.desirable_at:
        return "desirable"
    if reward <= policy.undesirable_at:
        return "undesirable"
    return None


def heldout_ids(labelled: Sequence[tuple[int, Label]], heldout_share: float) -> set[int]:
    """The turn ids held out: of each label, the `heldout_share` (rounded) whose hash ranks lowest.
    The hash is of the turn id alone, the same on every run and machine."""
    held: set[int] = set()
    for wanted in LABELS:
        ids = sorted((turn_id for turn_id, found in labelled if found == wanted), key=heldout_rank)
        held.update(ids[: math.floor(heldout_share * len(ids) + 0.5)])
    return held


def heldout_rank(turn_id: int) -> float:
    """A stable place in [0, 1) for a turn id: its rank among its label decides its split."""
    digest = hashlib.sha256(f"kindred-heldout:{turn_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def balance(desirable: int, undesirable: int) -> tuple[float, float]:
    """(desirable weight, undesirable weight): the larger label 1, the smaller n_large / n_small,
    so that w_D·n_D = w_U·n_U. (1, 1) when either label is missing."""
    if not desirable or not undesirable:
        return 1.0, 1.0
    if desirable >= undesirable:
        return 1.0, desirable / undesirable
    return undesirable / desirable, 1.0


def _example(item: _Labelled) -> TrainingExample:
    return TrainingExample(
        turn_id=item.reply.turn_id,
        prompt=item.reply.generation.prompt,
        # A cut reply is stored ending at its last whole sentence, or with an ellipsis the model
        # never wrote; trained on its own words, without an end token, either way.
        completion=as_written(item.reply.completion, item.reply.generation.cut),
        desirable=item.label == "desirable",
        cut=item.reply.generation.cut,
    )


def _snapshot(item: _Labelled) -> ExampleSnapshot:
    """R and every part of it, as the night saw them, so a run can always be explained."""
    reward, weights = item.reward, item.reward.weights
    parts = {
        "reaction": reward.reaction,
        "reactions": reward.reactions,
        "tool_uses": reward.tool_uses,
        "turns_followed": reward.turns_followed,
        "proactive_successes": reward.proactive_successes,
        "weights": {"alpha": weights.alpha, "beta": weights.beta, "gamma": weights.gamma},
        "adapter_version": item.reply.generation.adapter_version,
        "cut": item.reply.generation.cut,
    }
    return ExampleSnapshot(
        item.reply.turn_id, item.reply.user_id, item.label, item.split, reward.total, parts
    )


def _label_counts(examples: Sequence[TrainingExample]) -> tuple[int, int]:
    desirable = sum(1 for example in examples if example.desirable)
    return desirable, len(examples) - desirable


def _stats(
    kept: Sequence[_Labelled],
    train: Sequence[TrainingExample],
    heldout: Sequence[TrainingExample],
    left_out: Counter[str],
    policy: DatasetPolicy,
    window: tuple[datetime, datetime],
    weights: tuple[float, float],
) -> JSONObject:
    def per_label(examples: Sequence[TrainingExample]) -> dict[str, int]:
        return dict(zip(LABELS, _label_counts(examples), strict=True))

    return {
        "examples": per_label(train),
        "heldout": per_label(heldout),
        "people": len({item.reply.user_id for item in kept}),
        "left_out": {reason: left_out.get(reason, 0) for reason in LEFT_OUT},
        "only": {"persona": policy.persona, "model": policy.model},
        "window_days": policy.window_days,
        "window": {"start": window[0].isoformat(), "end": window[1].isoformat()},
        "weights": dict(zip(LABELS, weights, strict=True)),
        "cut": sum(1 for example in (*train, *heldout) if example.cut),
    }
