"""The score's parts (relevance, speaker, reward, decay per kind, verification), the favoured rule,
and the rules that give a person's statement its kind."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.memory.kinds import classify
from bot.core.memory.recall import Recalled, fit_budget, memory_line
from bot.core.memory.scoring import (
    DEFAULT_HALF_LIVES,
    SHIPPED,
    Scoring,
    decay,
    explain,
    normalised_reward,
    score,
    shares,
)
from bot.core.models import JSONObject, Memory
from bot.wiring.kindred import policy
from bot.wiring.settings import MemorySettings, Settings

NOW = datetime(2026, 8, 1, tzinfo=UTC)


def aged(kind: str, days: float, *, speaker: str = "user", meta: JSONObject | None = None) -> Memory:
    return Memory(1, "ann", kind, "text", speaker, NOW - timedelta(days=days), "m", meta or {})


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I'm sensitive to caffeine, coffee after 2pm keeps me up", "fact"),
        ("I am allergic to peanuts", "fact"),
        ("My sister's name is Ana", "fact"),
        ("I'm a nurse", "fact"),
        ("I love hiking", "preference"),
        ("I really hate cilantro", "preference"),
        ("I don't like horror films", "preference"),
        ("my favourite band is Muse", "preference"),
        ("We went to Rome yesterday", "event"),
        ("I have a dentist appointment next week", "event"),
        ("The party is on 12 March", "event"),
        ("I loved the concert last Friday", "event"),
        ("I'm going to the shop", "turn"),
        ("do I like coffee?", "question"),
        ("What is my job?", "question"),
        ("Huh? Where did I say I parked?", "question"),
        ("I moved last week. Have you been to Leeds?", "turn"),
        ("My dog is called Biscuit! Do you like the name?", "turn"),
        ("ok", "turn"),
        ("I've been sleeping badly lately", "turn"),
        ("I love " + "very " * 100 + "long stories", "turn"),
    ],
)
def test_statements_get_their_kind_by_rule(text: str, kind: str) -> None:
    assert classify(text) == kind


def test_stable_kinds_never_fade_and_episodes_fade_in_weeks() -> None:
    assert decay(aged("preference", 3650), NOW, SHIPPED) == 1.0
    assert decay(aged("fact", 3650), NOW, SHIPPED) == 1.0
    assert decay(aged("event", 21), NOW, SHIPPED) == pytest.approx(0.5)
    assert decay(aged("event", 90), NOW, SHIPPED) < 0.06
    assert decay(aged("turn", 120), NOW, SHIPPED) == pytest.approx(0.5)
    assert decay(aged("something-new", 120), NOW, SHIPPED) == pytest.approx(0.5)
    assert decay(aged("event", -5), NOW, SHIPPED) == 1.0, "a memory from the future is not fresher"
    custom = Scoring(half_life_days={"event": 0.0}, default_half_life_days=10.0)
    assert decay(aged("event", 90), NOW, custom) == 1.0
    assert decay(aged("turn", 10), NOW, custom) == pytest.approx(0.5)


def test_reward_is_normalised_around_one_half() -> None:
    assert normalised_reward(0.0) == 0.5
    assert normalised_reward(1.0) > 0.7 > normalised_reward(0.4)
    assert normalised_reward(-1.0) < 0.3
    assert 0 <= normalised_reward(-50) < normalised_reward(0.5) < normalised_reward(50) <= 1


def test_a_fresh_unrated_memory_keeps_its_relevance_and_the_rest_move_it() -> None:
    fresh = explain(aged("turn", 0), 0.016, 0.0, NOW, SHIPPED)
    assert (fresh.weight, fresh.decay, fresh.verification, fresh.favoured) == (0.5, 1.0, 0.0, False)
    assert score(fresh, SHIPPED) == pytest.approx(0.016)
    loved = explain(aged("preference", 400), 0.016, 2.0, NOW, SHIPPED)
    assert loved.favoured and score(loved, SHIPPED) > score(fresh, SHIPPED)
    said_by_bot = explain(aged("turn", 0, speaker="assistant"), 0.016, 0.0, NOW, SHIPPED)
    assert score(said_by_bot, SHIPPED) == pytest.approx(0.016 * SHIPPED.assistant_weight)
    verified = explain(replace(aged("turn", 0), verification=1.0), 0.016, 0.0, NOW, SHIPPED)
    assert verified.verification == 1.0 and score(verified, SHIPPED) > score(fresh, SHIPPED)
    covered = explain(replace(aged("turn", 0), weight=0.5), 0.016, 0.0, NOW, SHIPPED)
    assert covered.weight == 0.25 and score(covered, SHIPPED) < score(fresh, SHIPPED), "a summary covers it"
    # Bounded: no reward lifts a memory past one that is much more relevant.
    assert score(loved, SHIPPED) < score(fresh, SHIPPED) * (1 + SHIPPED.mix)
    assert "relevance 0.0160" in loved.render() and "favoured" in loved.render()


def test_shares_split_a_prompts_score() -> None:
    assert shares([3.0, 1.0]) == pytest.approx((0.75, 0.25))
    assert shares([]) == ()
    assert shares([0.0, 0.0]) == (0.5, 0.5)


def test_a_tight_budget_keeps_the_favoured_memory_in_order() -> None:
    def recalled(mid: int, reward: float) -> Recalled:
        memory = Memory(mid, "ann", "fact", f"memory {mid} " + "x" * 40, "user", NOW, "m")
        why = explain(memory, 0.016, reward, NOW, SHIPPED)
        return Recalled(memory, score(why, SHIPPED), why)

    items = [recalled(1, 0.0), recalled(2, 0.0), recalled(3, 3.0)]
    one_line = len(memory_line(items[0].memory)) // 4 + 1
    chosen = fit_budget(items, 2 * one_line, lambda text: len(text) // 4)
    assert [item.memory.id for item in chosen] == [1, 3]


def test_the_settings_defaults_are_the_scorings_and_reach_the_policy() -> None:
    settings = Settings(memory=MemorySettings())
    assert settings.memory.half_life_days == dict(DEFAULT_HALF_LIVES)
    assert policy(settings).scoring == Scoring(half_life_days=dict(DEFAULT_HALF_LIVES))
    custom = Settings(
        memory=MemorySettings(
            half_life_days={"event": 7.0, "turn": 30.0},
            weight_mix=0.5,
            KINDRED_REWARD_BETA=0.25,
            KINDRED_SESSION_GAP_MINUTES=10,
        )
    )
    made = policy(custom)
    assert made.scoring.half_life_days == {"event": 7.0, "turn": 30.0}
    assert made.scoring.default_half_life_days == 30.0 and made.scoring.mix == 0.5
    assert made.reward.beta == 0.25 and made.reward.session_gap.total_seconds() == 600
    with pytest.raises(ValueError, match="half-lives"):
        MemorySettings(half_life_days={"event": -1.0})
