"""`/admin`: Kindred's own figures next to a link to Flower. Admin only (HTTP basic auth).

Users, turns, memories and reactions per day, the reward trend as an inline SVG chart (no script,
no CDN), the jobs waiting per queue, and learning: the latest training runs (status, examples,
loss curve, gate report) and the positive-reaction rate per adapter version
(`training_view.py`), the variants with their reactions and the canary with its bounds over time
(`trials_view.py`), each proactive trigger's messages and success rate over the same days, and
everyone's usage with what is left of their budgets (`usage_view.py`).
Builds join it in a later issue. The page reads through a small Protocol
and a callable handed in by the composition root; it knows no store or queue implementation.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Protocol

from aiohttp import web

from bot.core.errors import KindredError
from bot.core.learning.ports import AdapterRegistry, LearningLog, RewardLog, Trials
from bot.core.learning.reward import RewardWeights
from bot.core.learning.variant_report import DEFAULT_WEIGHTS, status_report
from bot.core.models import DayStats, Stats
from bot.core.proactive.models import TriggerRate
from bot.core.usage import UsageReport
from bot.web.training_view import learning_section
from bot.web.trials_view import trials_section
from bot.web.usage_view import usage_section

log = logging.getLogger(__name__)

QueueDepths = Callable[[], Awaitable[Mapping[str, int]]]
REALM = 'Basic realm="Kindred admin", charset="UTF-8"'
CHART_W, CHART_H, PAD = 640, 160, 24


class AdminFigures(Protocol):
    async def stats(self) -> Stats: ...

    async def daily_activity(self, days: int) -> list[DayStats]: ...

    @property
    def adapters(self) -> AdapterRegistry: ...

    @property
    def learning(self) -> LearningLog: ...

    @property
    def trials(self) -> Trials: ...

    @property
    def rewards(self) -> RewardLog: ...


class TriggerRates(Protocol):
    async def trigger_rates(self, since: datetime) -> list[TriggerRate]: ...


@dataclass(frozen=True)
class AdminPage:
    figures: AdminFigures
    queue_depths: QueueDepths
    password: str
    flower_url: str | None = None
    days: int = 30
    runs: int = 10
    # The proactive ledger's counts; None where check-ins are not wired.
    proactive: TriggerRates | None = None
    # Where replies are generated now, in words (the auto backend changes its mind); None: not said.
    replies: Callable[[], str] | None = None
    # R's weights for the variants' mean R (tool uses α, proactive successes γ).
    weights: RewardWeights = DEFAULT_WEIGHTS
    # Everyone's usage and budgets, as `kindred usage` reads them; None: not shown.
    usage: UsageReport | None = None

    async def handle(self, request: web.Request) -> web.Response:
        if not self.authorised(request.headers.get("Authorization", "")):
            # Neither the header nor the password it carried is ever logged.
            return web.Response(status=401, text="admin only", headers={"WWW-Authenticate": REALM})
        stats = await self.figures.stats()
        days = await self.figures.daily_activity(self.days)
        try:
            depths: Mapping[str, int] | None = await self.queue_depths()
        except KindredError as exc:
            log.warning("admin: queue depths unavailable: %s", exc)
            depths = None
        now = datetime.now(UTC)
        since = now - timedelta(days=self.days)
        runs = await self.figures.adapters.list_runs(self.runs)
        rates = await self.figures.learning.version_rates(since)
        trials = await status_report(
            self.figures.trials, now, days=self.days, weights=self.weights, rewards=self.figures.rewards
        )
        learning = learning_section(runs, rates) + trials_section(trials)
        if self.proactive is not None:
            learning += proactive_section(await self.proactive.trigger_rates(since), self.days)
        if self.usage is not None:
            last = self.usage.today()
            first = last - timedelta(days=self.days - 1)
            everyday = await self.usage.lines(first, last)
            learning = usage_section(await self.usage.today_lines(), everyday, first, last) + learning
        replies = None if self.replies is None else self.replies()
        page = render(stats, days, depths, self.flower_url, learning, replies)
        return web.Response(text=page, content_type="text/html", headers=_NO_STORE)

    def authorised(self, header: str) -> bool:
        """Basic auth with any user name and the admin password, compared in constant time."""
        scheme, _, encoded = header.partition(" ")
        if scheme.lower() != "basic" or not encoded:
            return False
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return False
        _, _, given = decoded.partition(":")
        return hmac.compare_digest(given.encode(), self.password.encode())


_NO_STORE = {
    "Cache-Control": "no-store",
    # No other page may frame it: a framed, signed-in /admin could be clicked through (clickjacking).
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
}


def render(
    stats: Stats,
    days: Sequence[DayStats],
    depths: Mapping[str, int] | None,
    flower: str | None,
    learning: str = "",
    replies: str | None = None,
) -> str:
    totals = "".join(
        f"<div class=card><b>{value:,}</b><span>{label}</span></div>"
        for label, value in (
            ("users", stats.users),
            ("turns", stats.turns),
            ("memories", stats.memories),
            ("reactions", stats.feedback_events),
        )
    )
    rows = "".join(
        f"<tr><td>{d.day.isoformat()}</td><td>{d.users}</td><td>{d.turns}</td><td>{d.memories}</td>"
        f"<td>{d.reactions}</td><td>{'' if d.reward is None else f'{d.reward:+.2f}'}</td></tr>"
        for d in reversed(days)
    )
    if depths is None:
        queues = "<p>The job queue cannot be reached.</p>"
    else:
        queues = (
            "<table><tr><th>queue</th><th>waiting</th></tr>"
            + "".join(f"<tr><td>{escape(name)}</td><td>{count}</td></tr>" for name, count in depths.items())
            + "</table>"
        )
    flower_link = ""
    if flower:
        flower_link = f'<p><a href="{escape(flower, quote=True)}">Flower: Celery jobs and workers</a></p>'

    return f"""<!doctype html>
<html lang=en><head><meta charset=utf-8><title>Kindred admin</title>
<style>
body{{font:15px system-ui,sans-serif;margin:2rem;color:#222}} h2{{margin-top:2rem}}
.cards{{display:flex;gap:1rem}} .card{{border:1px solid #ddd;border-radius:12px;padding:1rem 1.5rem}}
.card b{{display:block;font-size:1.6rem}} table{{border-collapse:collapse}}
td,th{{padding:.25rem .75rem;border-bottom:1px solid #eee;text-align:right}}
td.message{{text-align:left;max-width:28rem}} ul.gate{{margin:0;padding:0;list-style:none;text-align:left}}
.fail{{color:#b00}} .step{{font-size:.8rem;color:#555}} td.name{{text-align:left}} small{{color:#555}}
</style></head><body>
<h1>Kindred</h1>
<div class=cards>{totals}</div>
<h2>Reward trend (mean reaction per day)</h2>
{reward_chart(days)}
<h2>Queues</h2>
{queues}
{flower_link}
{"" if replies is None else f"<p>Replies: {escape(replies)}</p>"}
{learning}
<h2>Per day (UTC)</h2>
<table><tr><th>day</th><th>users</th><th>turns</th><th>memories</th><th>reactions</th><th>reward</th></tr>
{rows}</table>
</body></html>
"""


def proactive_section(rates: Sequence[TriggerRate], days: int) -> str:
    """Each trigger's proactive messages: sent, accepted, dismissed, and the share accepted."""
    head = f"<h2>Proactive check-ins (last {days} days)</h2>"
    if not rates:
        return head + "<p>No proactive messages sent yet.</p>"
    rows = "".join(
        f"<tr><td>{escape(rate.trigger)}</td><td>{rate.sent}</td><td>{rate.accepted}</td>"
        f"<td>{rate.dismissed}</td><td>{rate.success_rate or 0:.0%}</td></tr>"  # a listed trigger sent some
        for rate in rates
    )
    return (
        f"{head}<table><tr><th>trigger</th><th>sent</th><th>accepted</th><th>dismissed</th>"
        f"<th>success rate</th></tr>{rows}</table>"
    )


def reward_chart(days: Sequence[DayStats]) -> str:
    """An inline SVG line of the daily mean reward on a −1…+1 scale; days without reactions are gaps."""
    if not days:
        return "<p>No days to show.</p>"
    step = (CHART_W - 2 * PAD) / max(len(days) - 1, 1)

    def y(value: float) -> float:
        clipped = max(-1.0, min(1.0, value))
        return PAD + (1 - (clipped + 1) / 2) * (CHART_H - 2 * PAD)

    segments: list[list[str]] = [[]]
    for i, day in enumerate(days):
        if day.reward is None:
            segments.append([])
        else:
            segments[-1].append(f"{PAD + i * step:.1f},{y(day.reward):.1f}")
    lines = "".join(
        f'<polyline points="{" ".join(points)}" fill="none" stroke="#FF9AA2" stroke-width="2"/>'
        for points in segments
        if len(points) > 1
    )
    dots = "".join(
        f'<circle cx="{PAD + i * step:.1f}" cy="{y(d.reward):.1f}" r="3" fill="#FF9AA2">'
        f"<title>{d.day.isoformat()}: {d.reward:+.2f} ({d.reactions} reactions)</title></circle>"
        for i, d in enumerate(days)
        if d.reward is not None
    )
    zero = y(0.0)
    return (
        f'<svg role="img" aria-label="reward per day" width="{CHART_W}" height="{CHART_H}" '
        f'viewBox="0 0 {CHART_W} {CHART_H}" xmlns="http://www.w3.org/2000/svg">'
        f'<line x1="{PAD}" x2="{CHART_W - PAD}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="#ccc"/>'
        f'<text x="2" y="{PAD + 4}" font-size="10">+1</text>'
        f'<text x="2" y="{CHART_H - PAD + 4}" font-size="10">−1</text>'
        f"{lines}{dots}</svg>"
    )
