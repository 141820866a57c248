"""What a recalled memory is worth: its relevance, weighed by reward, age and verification.

    score(q, m) = relevance(q, m) · speaker(m) · (1 + mix · (w(m) − ½))
    w(m)        = (r̂(m) · e^(−λ_kind · age) + v(m)) · c(m)
    r̂(m)        = (1 + tanh(r(m) / REWARD_SCALE)) / 2

- relevance: the reciprocal-rank fusion of dense and lexical search (core/memory/recall.py).
- r(m): the credit m earned from reactions to the replies that used it (store: `memory_rewards`);
  r̂(m) maps it into (0, 1), ½ for a memory nobody rated. So a fresh, unrated memory has w = ½ and
  keeps its relevance unchanged; decay and reward move it from there.
- λ_kind = ln 2 / half-life of the memory's kind; a half-life of 0 means no decay.
- v(m): verification (−1…1): 1 once the person confirmed the memory (/confirm) or corrected it.
- c(m): consolidation's weight, 1 unless a summary covers this raw turn (core/memory/consolidation.py).
- speaker: the assistant's own words count less than the person's. The bot's replies are not
  searched at all (kind `reply`, core/memory/kinds.py), so this weighs only other memories an assistant
  spoke, should a store hold any. A passage of a file the person shared (kind `document`) counts
  between the two: the person chose to share it, but its words are not theirs (an old plan, a
  forwarded letter), so what they said in chat comes first, and the model's words come after it.

The factor is bounded (at most ±mix/2 for unverified memories), so relevance stays first: reward and
age reorder memories of about equal relevance, and cannot lift an unrelated one over a related one.
A memory whose r̂ is above `favoured_reward` is kept in context first when the budget is tight
(`fit_budget` in core/memory/recall.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from bot.core.models import DOCUMENT, Memory

# r(m) = REWARD_SCALE maps to r̂ ≈ 0.88: a full ❤️ on a reply that used only m, or five ❤️ on
# replies where m had a fifth of the context.
REWARD_SCALE = 1.0
NEUTRAL = 0.5
SECONDS_PER_DAY = 86_400.0
TURN_HALF_LIFE_DAYS = 120.0
DOCUMENT_HALF_LIFE_DAYS = 60.0
DEFAULT_HALF_LIVES: Mapping[str, float] = MappingProxyType(
    {
        # Stable: who the person is and what they like does not fade with time, only by contradiction.
        "preference": 0.0,
        "fact": 0.0,
        # Episodic: "yesterday I…", "next week we…" matter for weeks.
        "event": 21.0,
        # Raw turns and imported lines: in between.
        "turn": TURN_HALF_LIFE_DAYS,
        "imported": TURN_HALF_LIFE_DAYS,
        "summary": TURN_HALF_LIFE_DAYS,
        # A shared file is mostly about its moment (a trip's plan, a term's timetable): it fades
        # faster than chat, and its many passages make room for what is said later.
        DOCUMENT: DOCUMENT_HALF_LIFE_DAYS,
    }
)


@dataclass(frozen=True, slots=True)
class Scoring:
    """The tunables of the score above; `bot/wiring/settings.py` has them as KINDRED_MEMORY_* settings."""

    half_life_days: Mapping[str, float] = field(default_factory=lambda: DEFAULT_HALF_LIVES)
    # For a kind missing from `half_life_days`.
    default_half_life_days: float = TURN_HALF_LIFE_DAYS
    # Replies (kind "reply") are never searched; see core/memory/kinds.py and bench/recall_evidence.py.
    assistant_weight: float = 0.85
    # A document's passages: below the person's own words (1), above the assistant's.
    document_weight: float = 0.92
    mix: float = 0.2
    favoured_reward: float = 0.7


@dataclass(frozen=True, slots=True)
class Why:
    """Why a memory was chosen: each part of its score."""

    relevance: float  # fused dense + lexical
    speaker: float  # the speaker factor
    reward: float  # r(m), the raw credit
    reward_norm: float  # r̂(m)
    decay: float  # e^(−λ_kind · age)
    verification: float  # v(m)
    weight: float  # w(m)
    favoured: bool  # r̂ above the threshold: kept in context first

    def render(self) -> str:
        mark = ", favoured" if self.favoured else ""
        return (
            f"relevance {self.relevance:.4f} × speaker {self.speaker:.2f}; w {self.weight:.3f} = "
            f"reward {self.reward_norm:.3f} (r {self.reward:+.3f}) × decay {self.decay:.3f}"
            f" + verification {self.verification:+.2f}{mark}"
        )


# What recall uses unless told otherwise.
SHIPPED = Scoring()


def normalised_reward(reward: float) -> float:
    return (1.0 + math.tanh(reward / REWARD_SCALE)) / 2.0


def decay(memory: Memory, now: datetime, scoring: Scoring) -> float:
    half_life = scoring.half_life_days.get(memory.kind, scoring.default_half_life_days)
    if half_life <= 0:
        return 1.0
    age_days = max((now - memory.created_at).total_seconds(), 0.0) / SECONDS_PER_DAY
    return math.exp(-math.log(2) * age_days / half_life)


def verification(memory: Memory) -> float:
    return min(max(memory.verification, -1.0), 1.0)


def speaker_weight(memory: Memory, scoring: Scoring) -> float:
    """Whose words a memory holds: the person's (1), a file they shared, or the assistant's."""
    if memory.kind == DOCUMENT:
        return scoring.document_weight
    return scoring.assistant_weight if memory.speaker == "assistant" else 1.0


def explain(memory: Memory, relevance: float, reward: float, now: datetime, scoring: Scoring) -> Why:
    reward_norm = normalised_reward(reward)
    fade = decay(memory, now, scoring)
    verified = verification(memory)
    return Why(
        relevance=relevance,
        speaker=speaker_weight(memory, scoring),
        reward=reward,
        reward_norm=reward_norm,
        decay=fade,
        verification=verified,
        weight=(reward_norm * fade + verified) * memory.weight,
        favoured=reward_norm > scoring.favoured_reward,
    )


def score(why: Why, scoring: Scoring) -> float:
    return why.relevance * why.speaker * (1.0 + scoring.mix * (why.weight - NEUTRAL))


def shares(scores: Sequence[float]) -> tuple[float, ...]:
    """Each score's part of their sum: how a reaction's credit is split among a prompt's memories."""
    total = sum(max(value, 0.0) for value in scores)
    if total <= 0:
        return tuple(1.0 / len(scores) for _ in scores) if scores else ()
    return tuple(min(max(value, 0.0) / total, 1.0) for value in scores)
