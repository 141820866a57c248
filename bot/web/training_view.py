"""`/admin`'s learning section: the latest training runs (status, examples, loss curve, gate
report) and how people reacted to each adapter version's replies. Pure rendering: every value
that came from the database, a job key or a message, is escaped here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from bot.core.learning.models import TrainingRun, VersionRate

CURVE_W, CURVE_H, CURVE_PAD = 220, 48, 4
# Step fields shown beside the curve, when the trainer logged them.
STEP_FIELDS = ("step", "loss", "kl", "margin", "examples_per_s")


def _text(value: Any) -> str:
    return escape(str(value), quote=True)


def _number(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return _text("" if value is None else value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return _text(value)


def learning_section(runs: Sequence[TrainingRun], rates: Sequence[VersionRate]) -> str:
    return (
        f"<h2>Training runs</h2>\n{runs_table(runs)}\n"
        f"<h2>Reactions per adapter version</h2>\n{rates_table(rates)}"
    )


def runs_table(runs: Sequence[TrainingRun]) -> str:
    if not runs:
        return "<p>No training run yet.</p>"
    rows = "".join(_run_row(run) for run in runs)
    return (
        "<table class=runs><tr><th>run</th><th>status</th><th>started (UTC)</th><th>examples</th>"
        "<th>adapter</th><th>loss</th><th>gate</th><th>message</th></tr>"
        f"{rows}</table>"
    )


def _run_row(run: TrainingRun) -> str:
    version = "" if run.adapter_version is None else f"v{run.adapter_version}"
    return (
        f"<tr><td>{run.id}</td><td class=status-{_text(run.status)}>{_text(run.status)}</td>"
        f"<td>{run.started_at:%Y-%m-%d %H:%M}</td><td>{_text(examples(run))}</td><td>{version}</td>"
        f"<td>{loss_curve(run.steps)}{last_step(run.steps)}</td><td>{gate_report(run.result)}</td>"
        f"<td class=message>{_text(run.message)}</td></tr>"
    )


def examples(run: TrainingRun) -> str:
    """ "6 + / 5 −" from the run's dataset statistics, or its first progress step."""
    dataset = run.result.get("dataset")
    counts = dataset.get("examples") if isinstance(dataset, Mapping) else None
    if isinstance(counts, Mapping):
        return f"{counts.get('desirable', 0)} + / {counts.get('undesirable', 0)} −"
    started = next((step for step in run.steps if "examples" in step), None)
    return "" if started is None else str(started["examples"])


def loss_curve(steps: Sequence[Mapping[str, Any]]) -> str:
    """The training loss per logged step as a small inline SVG line (no script, no CDN)."""
    losses = [float(step["loss"]) for step in steps if isinstance(step.get("loss"), int | float)]
    if len(losses) < 2:
        return ""
    low, high = min(losses), max(losses)
    span = (high - low) or 1.0
    dx = (CURVE_W - 2 * CURVE_PAD) / (len(losses) - 1)
    points = " ".join(
        f"{CURVE_PAD + i * dx:.1f},{CURVE_PAD + (high - loss) / span * (CURVE_H - 2 * CURVE_PAD):.1f}"
        for i, loss in enumerate(losses)
    )
    label = f"loss from {losses[0]:.4g} to {losses[-1]:.4g} over {len(losses)} steps"
    return (
        f'<svg role="img" aria-label="{_text(label)}" width="{CURVE_W}" height="{CURVE_H}" '
        f'viewBox="0 0 {CURVE_W} {CURVE_H}" xmlns="http://www.w3.org/2000/svg"><title>{_text(label)}</title>'
        f'<polyline points="{points}" fill="none" stroke="#6C8EBF" stroke-width="2"/></svg>'
    )


def last_step(steps: Sequence[Mapping[str, Any]]) -> str:
    trained = [step for step in steps if "loss" in step]
    if not trained:
        return ""
    last = trained[-1]
    shown = ", ".join(f"{_text(key)} {_number(last[key])}" for key in STEP_FIELDS if key in last)
    return f"<div class=step>{shown}</div>"


def gate_report(result: Mapping[str, Any]) -> str:
    """Each check of the gate: passed or not, its value against its bound."""
    gate = result.get("gate")
    checks = gate.get("checks") if isinstance(gate, Mapping) else None
    if not isinstance(checks, Mapping) or not checks:
        return ""
    items = "".join(
        f"<li class={'pass' if check.get('passed') else 'fail'}>{'✓' if check.get('passed') else '✗'} "
        f"{_text(name)}: {_number(check.get('value'))} (bound {_number(check.get('bound'))})"
        f"{' (reported, not gating)' if check.get('gates') is False else ''}</li>"
        for name, check in checks.items()
        if isinstance(check, Mapping)
    )
    return f"<ul class=gate>{items}</ul>"


def rates_table(rates: Sequence[VersionRate]) -> str:
    if not rates:
        return "<p>No replies in this period.</p>"
    rows = "".join(
        f"<tr><td>{'base model' if r.adapter_version is None else f'v{r.adapter_version}'}</td>"
        f"<td>{r.replies}</td><td>{r.rated}</td><td>{r.positive}</td>"
        f"<td>{'' if r.positive_rate is None else f'{r.positive_rate:.0%}'}</td></tr>"
        for r in rates
    )
    return (
        "<table class=rates><tr><th>version</th><th>replies</th><th>rated</th><th>positive</th>"
        f"<th>positive rate</th></tr>{rows}</table>"
    )
