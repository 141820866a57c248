"""The learning simulation's JSON: its rates, its decisions, and the checks against its targets.

Every number in it but the times repeats from the seed; the times are in the fields named
`minutes` (and `date`, `machine`), which a comparison of two runs leaves out.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import Any

from bench.learning_sim import (
    QUICK_TARGET_MINUTES,
    QUICK_TARGET_MINUTES_FP32,
    QUICK_TARGET_POINTS,
    TARGET_MINUTES,
    TARGET_POINTS,
    Plan,
)
from bench.parts.common import machine, now_iso
from bench.parts.learning.measure import Rate, binomial_se
from bench.parts.learning.nights import Night
from bench.parts.learning.people import DayReport

POWER_DAYS = 2000


def trains_in_bf16() -> bool:
    """Whether this machine's nights train in bfloat16, as the trainer decides it."""
    from bot.training.options import resolve_device, use_bf16

    return use_bf16(None, resolve_device("auto"))


def canary_plan(plan: Plan, policy: dict[str, Any]) -> dict[str, Any]:
    """The canary's settings as the nights ran them, and the power of one canary day of the plan's
    size, from the same test with the same teacher (bot/core/learning/canary_power.py; seeded)."""
    from bot.core.learning.canary_power import promotion_share

    replies, share = plan.replies_on(1), float(policy["share"])
    power = {
        f"lift_{lift}_points_from_5": promotion_share(lift / 100, 0.05, share, replies, seeds=POWER_DAYS)
        for lift in (25, 10, 0)
    }
    return {**policy, "replies_per_day": replies, "power": power, "power_days": POWER_DAYS}


def report(
    args: argparse.Namespace,
    plan: Plan,
    base: Rate,
    nights: Sequence[Night],
    days: Sequence[DayReport],
    minutes: float,
    *,
    threads: int,
    canary: dict[str, Any],
) -> dict[str, Any]:
    n = base.replies
    final = nights[-1].served_rate if nights else base.rate
    lift = round((final - base.rate) * 100, 1)
    promoted = [night.decision.get("decision") == "promoted" for night in nights]
    bf16 = trains_in_bf16()
    checks: dict[str, Any] = {"minutes": minutes_check(args.quick, bf16, minutes)}
    # No day's served rate below the base's by more than its 95 % interval.
    lowest = [
        {"night": night.night, "rate": night.served_rate,
         "upper95": round(night.served_rate + 1.96 * binomial_se(night.served_rate, n), 4)}
        for night in nights
    ]  # fmt: skip
    checks["no_day_below_the_base"] = {
        "passed": all(day["upper95"] >= base.rate for day in lowest),
        "base": round(base.rate, 4),
    }
    if args.teacher == "taste":
        target = QUICK_TARGET_POINTS if args.quick else TARGET_POINTS
        checks["lift_points"] = {"value": lift, "target": target, "passed": lift >= target}
    else:
        checks["nothing_promoted"] = {"passed": not any(promoted)}
    return {
        "benchmark": "learning_sim",
        "date": now_iso(),
        "machine": {**machine(), "torch_threads": threads, "bf16": bf16},
        "quick": args.quick,
        "teacher": args.teacher,
        "taste": args.taste,
        "learner": args.learner,
        "best_of": args.best_of,
        "noise": args.noise,
        "react_to_misses": args.react_to_misses,
        "claim_share": args.claim_share if args.teacher == "sycophant" else None,
        "seed": args.seed,
        "plan": dataclasses.asdict(plan),
        "canary": canary,
        "base_rate": round(base.rate, 4),
        # What serves after each canary day (one per night), and each night's candidate.
        "rates": [round(night.served_rate, 4) for night in nights],
        "candidate_rates": [
            None if night.candidate_rate is None else round(night.candidate_rate, 4) for night in nights
        ],
        "promoted": promoted,
        "decisions": [{"night": night.night, **night.decision} for night in nights],
        "canary_replies": sum(day.arms.get("canary", {}).get("replies", 0) for day in days),
        "lift_points": lift,
        # One held-out rate is a share of n replies: its standard error, in points.
        "rate_standard_error_points": round(binomial_se(final, n) * 100, 1),
        "held_out_replies": n,
        "days": [dataclasses.asdict(day) for day in days],
        "nights": [dataclasses.asdict(night) for night in nights],
        "minutes": round(minutes, 1),
        "checks": checks,
    }


def minutes_check(quick: bool, bf16: bool, minutes: float) -> dict[str, Any]:
    """The quick plan's limit depends on whether the nights train in bf16 (the issue's targets)."""
    limit = (QUICK_TARGET_MINUTES if bf16 else QUICK_TARGET_MINUTES_FP32) if quick else TARGET_MINUTES
    return {"minutes": round(minutes, 1), "limit": limit, "bf16": bf16, "passed": minutes <= limit}
