"""`kindred usage [--json] [--user ID] [--month YYYY-MM | --since DATE]`: what each person and
group chat used, one JSON object per line, one per person (or group) and day (a person's own day,
in their time zone where known; a group's UTC day); today by default. `budget_left` is what is left
of each budget on the person's current day. The same sums as /usage (bot/core/usage/report.py)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, date, datetime
from typing import Any

from bot.core.usage.periods import month_of
from bot.wiring.settings import Settings


def add_command(commands: Any) -> None:
    usage = commands.add_parser("usage", help="tokens, voice seconds, images, … per person and day")
    usage.add_argument("--json", action="store_true", help="one JSON object per person (or group) and day")
    usage.add_argument("--user", help="only this person, or this group chat (as the platform names it)")
    period = usage.add_mutually_exclusive_group()
    period.add_argument("--month", type=month, help="this month's days, YYYY-MM")
    period.add_argument("--since", type=day, help="every day from this one (YYYY-MM-DD) to today")


def month(text: str) -> date:
    try:
        return datetime.strptime(text, "%Y-%m").date()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a month as YYYY-MM (2026-12)") from None


def day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day as YYYY-MM-DD (2026-12-04)") from None


def period(args: argparse.Namespace, today: date) -> tuple[date, date]:
    """The days asked for, first and last included."""
    if args.month is not None:
        return month_of(args.month)
    if args.since is not None:
        return args.since, today
    return today, today


async def usage(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import open_store
    from bot.wiring.kindred import usage_report

    report_for = usage_report(settings)  # a broken budgets or models file is named before the store opens
    store = await open_store(settings)
    try:
        report = report_for(store)
        first, last = period(args, datetime.now(UTC).date())
        if args.month is None and args.since is None:
            lines = await report.today_lines(args.user)  # each person's own today
        else:
            lines = await report.lines(first, last, args.user)
    finally:
        await store.close()
    if args.json:
        sys.stdout.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    else:
        print(table(lines, first, last))
    return 0


def table(lines: list[dict[str, Any]], first: date, last: date) -> str:
    span = first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"
    if not lines:
        return f"No use on {span} (UTC days)."
    rows = [f"Use on {span} (UTC days):", f"{'day':<10}  {'who':<28} {'in':>9} {'out':>9} {'replies':>7} "
            f"{'voice s':>7} {'images':>6} {'first':>5} {'builds':>6}"]  # fmt: skip
    for line in lines:
        who = line.get("user") or f"{line['group']} (group)"
        rows.append(
            f"{line['day']:<10}  {who:<28} {line['tokens_in']:>9} {line['tokens_out']:>9} "
            f"{line['replies']:>7} {line['voice_seconds']:>7} {line['images']:>6} {line['proactive']:>5} "
            f"{line['app_builds']:>6}"
        )
    return "\n".join(rows)
