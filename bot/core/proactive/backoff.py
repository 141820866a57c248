"""Back-off: a trigger whose recent success rate is below the floor rests, per person or for all.

A success is a sent message whose outcome was an acceptance. The rate is over the last few outcomes
(no verdict on fewer than the minimum), so one bad week does not silence a trigger forever; a
resting trigger tries again once the rest has passed since its last message, and that try's
outcome decides whether it rests again. For everyone, only outcomes within the rest period count,
so a trigger backed off globally returns when its old failures age out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.proactive.models import TRIGGERS, PersonView, SentRecord, TriggerRate
from bot.core.proactive.policy import ProactivePolicy

ASKED_FOR = "reminder"  # never backed off: the person asked for it


def success_rate(records: Sequence[SentRecord], trigger: str, policy: ProactivePolicy) -> float | None:
    """The share accepted of `trigger`'s last outcomes, or None when there are too few."""
    outcomes = [r.accepted for r in records if r.trigger == trigger and r.accepted is not None]
    recent = outcomes[-policy.backoff_recent :]
    if len(recent) < policy.backoff_min_outcomes:
        return None
    return sum(1 for accepted in recent if accepted) / len(recent)


def backed_off_for(view: PersonView, now: datetime, policy: ProactivePolicy) -> frozenset[str]:
    """The triggers resting for this person at `now`."""
    resting = set()
    for trigger in TRIGGERS:
        if trigger == ASKED_FOR:
            continue
        rate = success_rate(view.sent, trigger, policy)
        last = max((r.at for r in view.sent if r.trigger == trigger), default=None)
        if (
            rate is not None
            and rate < policy.backoff_floor
            and last is not None
            and now - last < policy.backoff_rest
        ):
            resting.add(trigger)
    return frozenset(resting)


def backed_off(rates: Sequence[TriggerRate], policy: ProactivePolicy) -> frozenset[str]:
    """Triggers resting for everyone, from the sent ledger's counts within the rest period: too few
    of their outcomes accepted (`rests`). Passed on as `ProactivePolicy.backed_off`."""
    return frozenset(
        r.trigger for r in rates if rests(r.trigger, r.accepted, r.accepted + r.dismissed, policy)
    )


def rests(trigger: str, accepted: int, outcomes: int, policy: ProactivePolicy) -> bool:
    """Whether a trigger rests for everyone: enough outcomes in the rest period, too few of them
    accepted. A reminder the person asked for never rests."""
    return (
        trigger != ASKED_FOR
        and outcomes >= policy.backoff_min_outcomes
        and accepted / outcomes < policy.backoff_floor
    )
