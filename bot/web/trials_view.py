"""`/admin`'s variants and canary ([canary]): per variant the replies, rated replies, positive and
negative rates and mean R with their 95 % intervals; the running canary with its arms and the
bounds of its test over time as an inline SVG chart (no script, no CDN: the page's CSP runs none);
and the decided canaries with their reasons.

Pure rendering of `variant_report.status_report`'s JSON, the same object `kindred adapters status
--json` prints. Every string in it (a reason, a base model's name) is escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

CHART_W, CHART_H, PAD = 640, 160, 28
SMALL_W, SMALL_H = 220, 48
BAND, LINE = "#6C8EBF", "#3E5F8A"


def _text(value: Any) -> str:
    return escape(str(value), quote=True)


def _rate(value: Any, interval: Any) -> str:
    if value is None:
        return "–"
    shown = f"{value:.0%}"
    return shown if interval is None else f"{shown} <small>[{interval[0]:.0%}, {interval[1]:.0%}]</small>"


def _mean(value: Any, interval: Any) -> str:
    if value is None:
        return "–"
    shown = f"{value:+.2f}"
    return shown if interval is None else f"{shown} <small>[{interval[0]:+.2f}, {interval[1]:+.2f}]</small>"


def _signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.3g}"


def trials_section(report: Mapping[str, Any]) -> str:
    return (
        f"<h2>Variants (last {int(report['days'])} days)</h2>\n{variants_table(report['variants'])}\n"
        f"<h2>Canary</h2>\n{running_canary(report['canary'])}\n"
        f"<h3>Decided canaries</h3>\n{decided_table(report['decided'])}"
    )


def variants_table(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return "<p>No replies in this period.</p>"
    body = "".join(
        f"<tr><td class=name>{_text(row['variant']['describe'])}</td><td>{_text(row['base_model'])}</td>"
        f"<td>{_text(row['arm'])}</td><td>{int(row['replies'])}</td><td>{int(row['rated'])}</td>"
        f"<td>{_rate(row['positive_rate'], row['positive_interval'])}</td>"
        f"<td>{_rate(row['negative_rate'], row['negative_interval'])}</td>"
        f"<td>{_mean(row['mean_reward'], row['mean_reward_interval'])}</td></tr>"
        for row in rows
    )
    return (
        "<table class=variants><tr><th>variant</th><th>base model</th><th>arm</th><th>replies</th>"
        "<th>rated</th><th>positive (95 %)</th><th>negative (95 %)</th><th>mean R (95 %)</th></tr>"
        f"{body}</table>"
    )


def running_canary(canary: Mapping[str, Any] | None) -> str:
    if canary is None:
        return "<p>No canary is running.</p>"
    started = _text(canary["started_at"][:16].replace("T", " "))
    head = (
        f"<p class=canary>Canary {int(canary['id'])}, running since {started} UTC: "
        f"<b>{_text(canary['candidate']['describe'])}</b> answers {float(canary['share']):.0%} of replies "
        f"on {_text(canary['base_model'])}; <b>{_text(canary['serving']['describe'])}</b> the rest.</p>"
    )
    bounds = canary["bounds"]
    level = _level(canary)
    now = (
        "<p>No reply has entered its test yet.</p>"
        if bounds is None
        else f"<p>Difference (canary − serving) {_signed(bounds['estimate'])}, {level} bounds "
        f"{_signed(bounds['lower'])} to {_signed(bounds['upper'])}: promoted when the lower bound "
        "clears 0, stopped for harm when the upper one falls below it.</p>"
    )
    late = canary.get("changed_after_entry")
    changed = (
        ""
        if not late or not late["count"]
        else f"<p>{int(late['count'])} of the {int(late['checked'])} newest entered replies have another "
        "R now (a reaction added, changed or removed after they settled): shown, never fed back into "
        "the test.</p>"
    )
    chart = bounds_chart(canary["history"], CHART_W, CHART_H)
    return head + arms_table(canary["arms"]) + now + changed + chart


def _level(canary: Mapping[str, Any]) -> str:
    alpha = canary["policy"].get("alpha")
    return "one-sided" if alpha is None else f"one-sided {1 - float(alpha):.0%}"


def arms_table(arms: Mapping[str, Mapping[str, Any]]) -> str:
    rows = []
    for arm in ("canary", "serving"):
        shown = arms[arm]
        reactions = shown.get("reactions")
        entered = shown["entered"]
        rows.append(
            f"<tr><td>{arm}</td><td class=name>{_text(shown['variant']['describe'])}</td>"
            f"<td>{'–' if entered is None else int(entered)}</td><td>{_signed(shown['mean_reward'])}</td>"
            f"<td>{'–' if not reactions else int(reactions['replies'])}</td>"
            f"<td>{'–' if not reactions else int(reactions['rated'])}</td>"
            f"<td>{_rate(*_pair(reactions, 'positive'))}</td><td>{_rate(*_pair(reactions, 'negative'))}</td>"
            "</tr>"
        )
    return (
        "<table class=arms><tr><th>arm</th><th>variant</th><th>entered the test</th><th>mean R</th>"
        "<th>replies</th><th>rated</th><th>positive (95 %)</th><th>negative (95 %)</th></tr>"
        f"{''.join(rows)}</table>"
    )


def _pair(reactions: Mapping[str, Any] | None, which: str) -> tuple[Any, Any]:
    if not reactions:
        return None, None
    return reactions[f"{which}_rate"], reactions[f"{which}_interval"]


def decided_table(canaries: Sequence[Mapping[str, Any]]) -> str:
    if not canaries:
        return "<p>No canary decided yet.</p>"
    rows = "".join(
        f"<tr><td>{int(c['id'])}</td><td class=name>{_text(c['candidate']['describe'])}</td>"
        f"<td class=name>{_text(c['serving']['describe'])}</td>"
        f"<td>{_text(c['started_at'][:16].replace('T', ' '))}</td>"
        f"<td>{_text((c['decided_at'] or '')[:16].replace('T', ' '))}</td>"
        f"<td class=status-{_text(c['status'])}>{_text(c['status'])}</td>"
        f"<td class=message>{_text(c['reason'])}</td>"
        f"<td>{bounds_chart(c['history'], SMALL_W, SMALL_H)}</td></tr>"
        for c in canaries
    )
    return (
        "<table class=decided><tr><th>canary</th><th>candidate</th><th>against</th><th>started (UTC)</th>"
        "<th>decided (UTC)</th><th>decision</th><th>reason</th><th>bounds over time</th></tr>"
        f"{rows}</table>"
    )


def _finite(point: Mapping[str, Any]) -> bool:
    return all(isinstance(point.get(k), int | float) for k in ("estimate", "lower", "upper"))


def _scale(points: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """The y range: 0, every estimate, and the bounds of the later half. The first few entries'
    bounds are very wide; drawn whole they would flatten everything after them (they are clipped)."""
    later = points[len(points) // 2 :]
    values = [0.0, *(float(p["estimate"]) for p in points)]
    values += [float(p[k]) for p in later for k in ("lower", "upper")]
    low, high = min(values), max(values)
    margin = (high - low) * 0.05 or 1.0
    return low - margin, high + margin


def bounds_chart(history: Sequence[Mapping[str, Any]], width: int, height: int) -> str:
    """The test's bounds on the difference after each entry: a band from the lower to the upper
    bound, the estimate as a line, and 0 (the line each bound must cross) as a rule."""
    points = [p for p in history if _finite(p)]
    if len(points) < 2:
        return "" if width == SMALL_W else "<p>Too few entries yet to draw the bounds.</p>"
    low, high = _scale(points)
    pad = PAD if width == CHART_W else 4
    dx = (width - 2 * pad) / (len(points) - 1)

    def y(value: float) -> float:
        clipped = max(low, min(high, value))
        return pad + (high - clipped) / (high - low) * (height - 2 * pad)

    upper = [f"{pad + i * dx:.1f},{y(float(p['upper'])):.1f}" for i, p in enumerate(points)]
    lower = [f"{pad + i * dx:.1f},{y(float(p['lower'])):.1f}" for i, p in enumerate(points)]
    estimate = " ".join(f"{pad + i * dx:.1f},{y(float(p['estimate'])):.1f}" for i, p in enumerate(points))
    last = points[-1]
    label = (
        f"bounds over {len(points)} points: now {float(last['lower']):+.3g} to {float(last['upper']):+.3g}, "
        f"estimate {float(last['estimate']):+.3g}"
    )
    zero = y(0.0)
    scale = ""
    if width == CHART_W:
        scale = (
            f'<text x="2" y="{pad - 6}" font-size="10">{high:+.2g}</text>'
            f'<text x="2" y="{height - pad + 14}" font-size="10">{low:+.2g}</text>'
            f'<text x="{width - pad + 4}" y="{zero + 3:.1f}" font-size="10">0</text>'
        )
    return (
        f'<svg class=bounds role="img" aria-label="{_text(label)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg"><title>{_text(label)}</title>'
        f'<polygon points="{" ".join(upper + lower[::-1])}" fill="{BAND}" fill-opacity="0.3"/>'
        f'<line x1="{pad}" x2="{width - pad}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="#999" '
        f'stroke-dasharray="4 3"/>'
        f'<polyline points="{estimate}" fill="none" stroke="{LINE}" stroke-width="2"/>{scale}</svg>'
    )
