"""/admin's usage: tokens per day over the page's days as an inline SVG bar chart (no script), and
each person's and group chat's use today with what is left of their budgets: the lines
`kindred usage --json` prints (bot/core/usage/report.py), so that the two always agree."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from html import escape
from typing import Any

CHART_W, CHART_H, PAD = 640, 160, 24
Lines = Sequence[dict[str, Any]]


def usage_section(today: Lines, days: Lines, first: date, last: date) -> str:
    """`today`: each one's line for their own today; `days`: every line from `first` to `last`."""
    head = f"<h2>Usage (last {(last - first).days + 1} days)</h2>"
    rows = "".join(_row(line) for line in today)
    table = (
        "<table class=usage><tr><th>who</th><th>day</th><th>tokens in</th><th>tokens out</th><th>cost</th>"
        f"<th>replies</th><th>voice s</th><th>images</th><th>left</th></tr>{rows}</table>"
        if rows
        else "<p>Nobody has used anything today.</p>"
    )
    return head + tokens_chart(days, first, last) + "<h3>Today</h3>" + table


def _row(line: dict[str, Any]) -> str:
    who = f"{line['group']} (group)" if "group" in line else line["user"]
    left = line["budget_left"]
    shown = (
        "no budget" if left is None else ", ".join(f"{k.replace('_', ' ')}: {v:,}" for k, v in left.items())
    )
    return (
        f"<tr><td class=name>{escape(who)}</td><td>{line['day']}</td><td>{line['tokens_in']:,}</td>"
        f"<td>{line['tokens_out']:,}</td><td>{line['cost']:.4f}</td><td>{line['replies']}</td>"
        f"<td>{line['voice_seconds']}</td><td>{line['images']}</td><td>{escape(shown)}</td></tr>"
    )


def tokens_chart(days: Lines, first: date, last: date) -> str:
    """One bar per day: the tokens (in and out) every person used; a group's are theirs already."""
    count = (last - first).days + 1
    totals = [0] * count
    for line in days:
        index = (date.fromisoformat(line["day"]) - first).days
        if "user" in line and 0 <= index < count:
            totals[index] += line["tokens_in"] + line["tokens_out"]
    top = max(totals) or 1
    width = (CHART_W - 2 * PAD) / count
    bars = "".join(
        f'<rect x="{PAD + i * width:.1f}" y="{CHART_H - PAD - h:.1f}" width="{max(width - 2, 1):.1f}" '
        f'height="{h:.1f}" fill="#B5EAD7"><title>{first + timedelta(days=i)}: {total:,} tokens</title></rect>'
        for i, total in enumerate(totals)
        for h in [(CHART_H - 2 * PAD) * total / top]
    )
    return (
        f'<svg role="img" aria-label="tokens per day" width="{CHART_W}" height="{CHART_H}" '
        f'viewBox="0 0 {CHART_W} {CHART_H}" xmlns="http://www.w3.org/2000/svg">'
        f'<line x1="{PAD}" x2="{CHART_W - PAD}" y1="{CHART_H - PAD}" y2="{CHART_H - PAD}" stroke="#ccc"/>'
        f'<text x="2" y="{PAD + 4}" font-size="10">{top:,}</text>{bars}</svg>'
    )
