"""The canary's power: how many replies in a day the sequential test needs to promote a real lift.

By simulation with learning_sim's teacher (bot/core/learning/canary_power.py): a candidate that
meets the taste in base + lift of its replies against the serving variant's base, each reply sent
to the canary with probability `share`, the test looked at after every reply as it is live. The
number reported is the fewest replies (both arms) after which at least `power` of the simulated
days have promoted. Beside it, the share of days on which alike arms are promoted (false
promotions, which must stay under α) over the same number of days and replies.

    .venv/bin/python -m bench.canary_power            # 2,000 days each
    .venv/bin/python -m bench.canary_power --quick    # 300 days: a smoke run

stdout holds one JSON object; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from bench.parts.common import log, machine, now_iso
from bot.core.learning.canary_power import promotion_share, replies_for_power, simulate_days
from bot.core.learning.sequential import SequentialPolicy

BASE_RATE = 0.05  # the base model met the taste in 2–7 % of replies on the recorded nights
LIFT = 0.25  # a candidate at 30 %
SHARES = (0.5, 0.2)  # the simulation's share, and the product's default
POWER = 0.8
FALSE_PROMOTION_REPLIES = 600
TEACHER = "learning_sim's: 👍 if the taste is met, 👎 on 1 in 4 misses, 10 % of reactions flipped"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--seeds", type=int, help="simulated days per figure (default 2000; --quick 300)")
    parser.add_argument("--seed", type=int, default=0, help="the first day's seed (default 0)")
    parser.add_argument("--alpha", type=float, default=SequentialPolicy().alpha)
    parser.add_argument("--quick", action="store_true", help="300 days a figure: a smoke run")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> dict[str, Any]:
    seeds = args.seeds or (300 if args.quick else 2000)
    policy = SequentialPolicy(alpha=args.alpha)
    started = time.monotonic()
    report: dict[str, Any] = {"date": now_iso(), "machine": machine(), "benchmark": "canary_power"}
    report["settings"] = {
        "policy": asdict(policy), "base_rate": BASE_RATE, "lift": LIFT, "power": POWER, "seeds": seeds,
        "seed": args.seed, "teacher": TEACHER,
    }  # fmt: skip
    needed: dict[str, int | None] = {}
    check: dict[str, float] = {}
    false_promotions: dict[str, float] = {}
    for share in SHARES:
        key = f"share_{share:g}"
        needed[key] = replies_for_power(LIFT, BASE_RATE, share, POWER, policy, seeds, seed=args.seed)
        log(f"share {share:g}: {needed[key]} replies for {POWER:.0%} power")
        if needed[key] is not None:
            # The same number on days the search never saw: about `POWER` again, give or take noise.
            check[key] = promotion_share(LIFT, BASE_RATE, share, needed[key], policy=policy, seeds=seeds,
                                         seed=args.seed + 1)  # fmt: skip
        alike = simulate_days(0.0, BASE_RATE, share, FALSE_PROMOTION_REPLIES, policy=policy, seeds=seeds,
                              seed=args.seed + 2)  # fmt: skip
        false_promotions[key] = float(np.mean(alike.decision == 1))
    report["replies_for_power"] = needed
    report["power_on_fresh_days"] = check
    report["false_promotions_alike_arms"] = {"replies": FALSE_PROMOTION_REPLIES, **false_promotions}
    report["run_s"] = round(time.monotonic() - started, 2)
    return report


def main(argv: Sequence[str] | None = None) -> None:
    print(json.dumps(run(parse_args(argv)), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
