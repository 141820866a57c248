"""Which of the occasions found are sent now: consent, quiet hours, the cap, back-off.

`choose` returns what to send at `now`; nothing else is lost, because the triggers find a standing
occasion again on a later beat (its key is stable) and a sent one never again. The choices:
- An inactive person (who blocked the bot) gets nothing, not even reminders.
- Reminders are asked for: no opt-in, no cap, no back-off, no "don't suggest this again". In quiet
  hours they are deferred (not dropped): still due, they are chosen on the first beat after.
- Other occasions need opt-in and a known zone (quiet hours mean nothing without one). In quiet
  hours they are held: a habit offer or a follow-up is still standing in the morning; a long
  session is over by then and is not suggested late.
- At most `daily_cap` proactive messages per local day, counted from the sent records (reminders
  not counted), at most one per beat, and none within `min_spacing` of the last one.
- A declined occasion, a trigger the person turned off, and a backed-off trigger are not sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.proactive.backoff import backed_off_for
from bot.core.proactive.local_time import in_quiet_hours, settings_zone
from bot.core.proactive.models import Occasion, PersonView
from bot.core.proactive.policy import ProactivePolicy
from bot.core.proactive.replies import is_acceptance, is_decline, is_dont_suggest_again

# Most time-bound first: a break suggestion is worth nothing tomorrow, a routine offer keeps.
PRIORITY = ("long_session", "follow_up", "habit")


def choose(
    occasions: Sequence[Occasion], view: PersonView, now: datetime, policy: ProactivePolicy
) -> list[Occasion]:
    """The occasions to send to `view`'s person at `now`, reminders first."""
    settings = view.settings
    if settings.inactive:
        return []
    tz = settings_zone(settings)
    quiet = tz is not None and in_quiet_hours(now, settings, tz)
    sent = {record.key for record in view.sent}
    fresh = [o for o in occasions if o.user_id == view.user_id and o.due <= now and o.key not in sent]
    chosen = [] if quiet else [o for o in fresh if o.trigger == "reminder"]
    if not settings.enabled or tz is None or quiet or _room(view, now, policy) <= 0:
        return chosen
    resting = backed_off_for(view, now, policy) | policy.backed_off | settings.disabled
    offers = [
        o for o in fresh
        if o.trigger != "reminder" and o.trigger not in resting and o.key not in settings.declined
    ]  # fmt: skip
    offers.sort(key=lambda o: PRIORITY.index(o.trigger) if o.trigger in PRIORITY else len(PRIORITY))
    return chosen + offers[:1]


def sent_today(view: PersonView, now: datetime) -> int:
    """Proactive messages (not reminders) sent on the person's local day of `now`."""
    tz = settings_zone(view.settings)
    if tz is None:
        return 0
    today = now.astimezone(tz).date()
    return sum(1 for r in view.sent if r.trigger != "reminder" and r.at.astimezone(tz).date() == today)


def _room(view: PersonView, now: datetime, policy: ProactivePolicy) -> int:
    """How many more proactive messages may go today: 0 within the spacing of the last one."""
    last = max((r.at for r in view.sent if r.trigger != "reminder"), default=None)
    if last is not None and now - last < policy.min_spacing:
        return 0
    return policy.daily_cap - sent_today(view, now)


# replies.py's rules are read with the choice: the outcome of what was sent decides the back-off.
__all__ = ["PRIORITY", "choose", "is_acceptance", "is_decline", "is_dont_suggest_again", "sent_today"]
