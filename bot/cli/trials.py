"""`kindred adapters status` and `kindred adapters canary stop`: variants with their reactions and
the canary ([canary]). Their JSON output is a contract (docs/learning.md)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Coroutine, Mapping
from datetime import UTC, datetime
from typing import Any

from bot.core.learning.canary import stop as stop_canary
from bot.core.learning.variant_report import (
    DAYS,
    STOPPED_BY_ADMIN,
    canary_json,
    report_text,
    status_report,
    stopped_text,
)
from bot.core.store import Store
from bot.wiring.settings import Settings

STOP = "kindred adapters canary stop"


def add_commands(which: Any) -> None:
    """Register `status` and `canary` under `kindred adapters`."""
    status = which.add_parser("status", help="replies and reactions per variant, and the canary")
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.add_argument("--days", type=days_count, default=DAYS, help=f"variants of the last N days ({DAYS})")
    canary = which.add_parser("canary", help="the candidate on trial")
    verbs = canary.add_subparsers(dest="canary_verb", required=True)
    stop = verbs.add_parser("stop", help="stop the running canary; the serving variant keeps serving")
    stop.add_argument("--reason", default="", help="why, kept with the canary")
    stop.add_argument("--json", action="store_true", help="the stopped canary as one JSON object")


def days_count(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 3650:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days (1 to 3650)")
    return int(text)


async def adapters_status(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.memory_jobs import reward_weights

    weights = reward_weights(settings.memory)
    now = datetime.now(UTC)
    report = await _store_call(
        settings,
        lambda store: status_report(
            store.trials, now, days=args.days, weights=weights, rewards=store.rewards
        ),
    )
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        print(status_text(report))
    return 0


async def canary_command(settings: Settings, args: argparse.Namespace) -> int:
    reason = STOPPED_BY_ADMIN + (f": {args.reason.strip()}" if args.reason.strip() else "")
    stopped = await _store_call(settings, lambda store: stop_canary(store.trials, reason, datetime.now(UTC)))
    if args.json:
        shown = None if stopped is None else canary_json(stopped)
        sys.stdout.write(json.dumps(shown, ensure_ascii=False) + "\n")
    else:
        print(stopped_text(stopped))
    return 0


def _interval(value: Any, interval: Any, form: str) -> str:
    if value is None:
        return "–"
    shown = format(value, form)
    return shown if interval is None else f"{shown} [{interval[0]:{form}}, {interval[1]:{form}}]"


def status_text(report: Mapping[str, Any]) -> str:
    """The variants as a table, then the canary in words."""
    lines = [f"Variants, last {report['days']} days (95 % intervals):"]
    if not report["variants"]:
        lines.append("  no replies")
    for row in report["variants"]:
        lines.append(
            f"  {row['variant']['describe']} on {row['base_model'] or '?'} ({row['arm']}): "
            f"{row['replies']} replies, {row['rated']} rated, "
            f"positive {_interval(row['positive_rate'], row['positive_interval'], '.0%')}, "
            f"negative {_interval(row['negative_rate'], row['negative_interval'], '.0%')}, "
            f"mean R {_interval(row['mean_reward'], row['mean_reward_interval'], '+.2f')}"
        )
    lines.append(report_text(report, STOP))
    # Without a running canary, the words above told the last decided one already.
    earlier = report["decided"][0 if report["canary"] else 1 :]
    if earlier:
        lines.append("Decided before:")
    lines += [
        f"  canary {c['id']} ({c['candidate']['describe']}): {c['status']}, {c['reason']}" for c in earlier
    ]
    return "\n".join(lines)


async def _store_call(settings: Settings, call: Callable[[Store], Coroutine[Any, Any, Any]]) -> Any:
    from bot.wiring.backends import open_store

    store = await open_store(settings)
    try:
        return await call(store)
    finally:
        await store.close()


HANDLERS = {"status": adapters_status, "canary": canary_command}
