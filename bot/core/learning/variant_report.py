"""What admins see of variants and the canary ([canary]): per variant, the replies, how many were
rated, the positive and negative rates and the mean R, each with a 95 % interval; and the running
canary and the decided ones, with the bounds of their test over time.

One JSON report serves `kindred adapters status --json`, `/admin` and `/canary`, so the three
never disagree. Nothing here does I/O but the store's reads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from bot.core.learning.models import Arm, Canary, Variant, VariantStats
from bot.core.learning.ports import RewardLog, Trials
from bot.core.learning.reward import RewardWeights, reply_reward
from bot.core.models import JSONObject

# The two-sided 95 % normal quantile: both the Wilson intervals and the mean R's interval.
Z95 = 1.959963984540054
DAYS = 7
DECIDED_SHOWN = 5
# A canary's test adds a point per entry that moved its bounds: thousands over a week. A chart
# needs no more than this many, and neither does the JSON a person reads.
HISTORY_SHOWN = 240
HISTORY_NUMBERS = ("estimate", "lower", "upper", "n_canary", "n_serving", "mean_canary", "mean_serving")
DEFAULT_WEIGHTS = RewardWeights()
STOPPED_BY_ADMIN = "stopped by an admin"
NOTHING_TO_STOP = "No canary is running: nothing to stop."
ARMS: tuple[Arm, ...] = ("canary", "serving")


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (Wilson 1927); None without trials. Unlike
    p ± z·se it stays inside [0, 1] and is not zero-width at 0 or n successes."""
    if trials <= 0:
        return None
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials)) / (1 + z2n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(total: float, squares: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The normal interval of a mean from its sum and sum of squares: mean ± z·s/√n, with s the
    sample standard deviation. None with fewer than two values (no spread to measure)."""
    if n < 2:
        return None
    mean = total / n
    # Rounding can make a constant sample's variance slightly negative.
    variance = max(0.0, (squares - n * mean * mean) / (n - 1))
    half = z * math.sqrt(variance / n)
    return mean - half, mean + half


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def variant_json(variant: Variant) -> JSONObject:
    return {**variant.as_json(), "describe": variant.describe()}


def stats_json(row: VariantStats) -> JSONObject:
    """One row of the variants table: a variant on a base model, in one arm."""
    rated = row.rated
    return {
        "variant": variant_json(row.variant),
        "base_model": row.base_model,
        "arm": row.arm,
        "replies": row.replies,
        "rated": rated,
        "positive": row.positive,
        "negative": row.negative,
        "positive_rate": row.positive / rated if rated else None,
        "positive_interval": _pair(wilson(row.positive, rated)),
        "negative_rate": row.negative / rated if rated else None,
        "negative_interval": _pair(wilson(row.negative, rated)),
        "mean_reward": row.reward_sum / row.replies if row.replies else None,
        "mean_reward_interval": _pair(mean_interval(row.reward_sum, row.reward_squares, row.replies)),
    }


def _number(value: Any) -> float | None:
    """A JSON number, or None (also for ±∞ and NaN, which JSON cannot carry)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def history_points(history: Sequence[Mapping[str, Any]], shown: int = HISTORY_SHOWN) -> list[JSONObject]:
    """The test's points, thinned evenly to at most `shown` (the first and the last always kept),
    with only the fields a chart reads."""
    if len(history) > shown > 1:
        step = (len(history) - 1) / (shown - 1)
        history = [history[round(i * step)] for i in range(shown)]
    return [
        {"at": str(point.get("at", "")), **{key: _number(point.get(key)) for key in HISTORY_NUMBERS}}
        for point in history
    ]


def _arm_reactions(canary: Canary, rows: Sequence[VariantStats]) -> dict[str, JSONObject | None]:
    found: dict[str, JSONObject | None] = {}
    for arm in ARMS:
        variant = canary.variant(arm)
        row = next(
            (r for r in rows if r.arm == arm and r.variant == variant and r.base_model == canary.base_model),
            None,
        )
        found[arm] = None if row is None else stats_json(row)
    return found


def _bounds(latest: Mapping[str, Any] | None) -> JSONObject | None:
    """The latest bounds; None until an entry gave the test some."""
    if latest is None or latest["lower"] is None or latest["upper"] is None:
        return None
    return {key: latest[key] for key in ("estimate", "lower", "upper")}


def canary_json(canary: Canary, since_start: Sequence[VariantStats] | None = None) -> JSONObject:
    """A canary as admins see it. `since_start`: `variant_stats` since it started, for each arm's
    reactions (the serving arm's row counts every reply of the serving variant on the canary's
    base model, people outside the trial too); the test's own counts are its history's."""
    last = history_points(canary.history[-1:])
    latest = last[0] if last else None
    arms: dict[str, Any] = {
        arm: {
            "variant": variant_json(canary.variant(arm)),
            "entered": None if latest is None else latest[f"n_{arm}"],
            "mean_reward": None if latest is None else latest[f"mean_{arm}"],
        }
        for arm in ARMS
    }
    if since_start is not None:
        for arm, reactions in _arm_reactions(canary, since_start).items():
            arms[arm]["reactions"] = reactions
    # The policy is the test's settings; only its numbers are shown (nothing else belongs there).
    policy = {key: value for key, value in canary.policy.items() if _number(value) is not None}
    return {
        "id": canary.id,
        "status": canary.status,
        "base_model": canary.base_model,
        "candidate": variant_json(canary.candidate),
        "serving": variant_json(canary.serving),
        "share": canary.share,
        "started_at": canary.started_at.isoformat(),
        "decided_at": None if canary.decided_at is None else canary.decided_at.isoformat(),
        "policy": policy,
        "arms": arms,
        "bounds": _bounds(latest),
        "decision": None if canary.status == "running" else canary.status,
        "reason": canary.reason,
        "history": history_points(canary.history),
    }


async def status_report(
    trials: Trials,
    now: datetime,
    *,
    days: int = DAYS,
    weights: RewardWeights = DEFAULT_WEIGHTS,
    decided: int = DECIDED_SHOWN,
    rewards: RewardLog | None = None,
) -> JSONObject:
    """Variants of the last `days` days, the running canary and the last `decided` decided ones:
    the JSON of `kindred adapters status --json` (docs/learning.md). With `rewards`, the running
    canary also lists the entered replies whose R changed since they entered (shown, never fed
    back into the test)."""
    since = now - timedelta(days=days)
    rows = await trials.variant_stats(since, weights.alpha, weights.gamma)
    running = await trials.running_canary()
    canary = None
    if running is not None:
        arms = await trials.variant_stats(running.started_at, weights.alpha, weights.gamma)
        canary = canary_json(running, arms)
        if rewards is not None:
            late = await late_changes(trials, rewards, running, weights)
            canary = {**canary, "changed_after_entry": late}
    # One more than shown: the running canary, newest of all, is among them.
    past = [c for c in await trials.list_canaries(decided + 1) if c.status != "running"][:decided]
    serving = await trials.serving_reward_model()
    return {
        "since": since.isoformat(),
        "days": days,
        "weights": {"alpha": weights.alpha, "gamma": weights.gamma},
        "serving_reward_model": None if serving is None else serving.version,
        "variants": [stats_json(row) for row in rows],
        "canary": canary,
        "decided": [canary_json(c) for c in past],
    }


# -- in words: `/canary` and `kindred adapters status` ------------------------------------------


def _signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.3g}"


def _count(value: Any) -> str:
    return "–" if value is None else f"{value:.0f}"


def _level(summary: Mapping[str, Any]) -> str:
    alpha = summary["policy"].get("alpha")
    return "" if alpha is None else f"{1 - alpha:.0%} "


def canary_text(summary: Mapping[str, Any]) -> str:
    """A canary in a few lines for the chat and the terminal."""
    candidate, serving = summary["candidate"]["describe"], summary["serving"]["describe"]
    started = summary["started_at"][:16].replace("T", " ")
    if summary["status"] == "running":
        head = (
            f"Canary {summary['id']} is running since {started} UTC: {candidate} answers "
            f"{summary['share']:.0%} of replies on {summary['base_model']}, {serving} the rest."
        )
    else:
        decided = (summary["decided_at"] or "")[:16].replace("T", " ")
        head = (
            f"Canary {summary['id']} ({candidate} against {serving}) ended {decided} UTC: "
            f"{summary['status']}."
        )
    lines = [head]
    arms, bounds = summary["arms"], summary["bounds"]
    if bounds is None:
        lines.append("No reply has entered its test yet.")
    else:
        c, s = arms["canary"], arms["serving"]
        lines.append(
            f"Entered: {_count(c['entered'])} canary and {_count(s['entered'])} serving replies; "
            f"mean R {_signed(c['mean_reward'])} against {_signed(s['mean_reward'])}."
        )
        lines.append(
            f"Difference {_signed(bounds['estimate'])}, {_level(summary)}bounds "
            f"{_signed(bounds['lower'])} to {_signed(bounds['upper'])}."
        )
    if summary["reason"]:
        lines.append(f"Reason: {summary['reason']}")
    return "\n".join(lines)


def report_text(report: Mapping[str, Any], stop: str) -> str:
    """The state of trials in words: the running canary, or that none runs and the last decided.
    `stop`: the command that stops it where the words are shown."""
    if report["canary"] is not None:
        return f"{canary_text(report['canary'])}\n{stop} stops it; the serving variant keeps serving."
    if not report["decided"]:
        return "No canary is running, and none has run yet."
    return "No canary is running. The last one:\n" + canary_text(report["decided"][0])


async def canary_state(trials: Trials, stop: str = "/canary stop") -> str:
    """`/canary`: the running canary, or the last decided one, in words."""
    running = await trials.running_canary()
    past = [] if running else [c for c in await trials.list_canaries(1) if c.status != "running"]
    report = {
        "canary": None if running is None else canary_json(running),
        "decided": [canary_json(c) for c in past],
    }
    return report_text(report, stop)


def stopped_text(stopped: Canary | None) -> str:
    if stopped is None:
        return NOTHING_TO_STOP
    return (
        f"Stopped canary {stopped.id} ({stopped.candidate.describe()}); "
        f"{stopped.serving.describe()} keeps serving."
    )


# The newest entries whose reward is compared with what it is now: a bound on the work per look.
LATE_CHANGES_CHECKED = 500
LATE_CHANGES_SHOWN = 20


async def late_changes(
    trials: Trials, rewards: RewardLog, canary: Canary, weights: RewardWeights
) -> JSONObject:
    """Entered replies whose R is no longer what entered the test (a reaction added, changed or
    removed after the reply settled): how many among the newest checked, and the first few."""
    entries = (await trials.entries(canary.id))[-LATE_CHANGES_CHECKED:]
    changed = []
    for entry in entries:
        now = await reply_reward(rewards, entry.turn_id, weights)
        if now is not None and abs(now.total - entry.reward) > 1e-9:
            changed.append(
                {"turn": entry.turn_id, "arm": entry.arm, "entered": entry.reward, "now": now.total}
            )
    return {"checked": len(entries), "count": len(changed), "replies": changed[:LATE_CHANGES_SHOWN]}
