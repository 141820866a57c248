"""Long session: continuous activity (gaps shorter than 30 min) for longer than 3 h → suggest a break.

The session must still be going (the last message is less than a gap ago): a break suggested after
the person has left helps nobody. One suggestion per session (the key is the session's start) and
none within the cooldown of the last. The break names a remembered preference where there is one,
found in the person's memories by plain rules: "my usual café is Bean There", "I love green tea".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from bot.core.proactive.models import Activity, Occasion, PersonView, RememberedFact, TriggerName
from bot.core.proactive.occasions import occasion_key
from bot.core.proactive.policy import ProactivePolicy

TRIGGER: TriggerName = "long_session"
_DRINKS = (
    "coffee", "espresso", "latte", "cappuccino", "flat white", "tea", "green tea", "chai",
    "matcha", "hot chocolate", "smoothie", "juice", "lemonade", "kombucha",
)  # fmt: skip
_PLACE = r"(?:caf[eé]|coffee shop|bakery|tea room|tea shop|park|spot)"
_NAME = r"([A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*){0,3})"
# "my usual café is Bean There", "my favourite café, Bean There", "I always go to Bean There café"
_PLACE_RULES = (
    re.compile(rf"(?i:\bmy (?:usual|favou?rite|regular) {_PLACE}(?: is|,| called)? (?:the )?){_NAME}"),
    re.compile(rf"(?i:\b(?:I (?:always|usually|often) go to|I love) (?:the )?){_NAME} (?i:{_PLACE})"),
)
_LIKE = (
    r"(?:I (?:love|like|enjoy|adore|always have|usually have|usually drink|always drink)"
    r"|my favou?rite drink is)"
)


def session_start(activity: Sequence[Activity], now: datetime, policy: ProactivePolicy) -> datetime | None:
    """When the session still going at `now` began, if it is longer than the policy's length."""
    if not activity or now - activity[-1].at >= policy.session_gap or activity[-1].at > now:
        return None
    start = activity[-1].at
    for earlier in reversed(activity[:-1]):
        if start - earlier.at >= policy.session_gap:
            break
        start = earlier.at
    return start if activity[-1].at - start > policy.session_length else None


def preference(memories: Sequence[RememberedFact]) -> str | None:
    """A break worth naming ("a coffee at Bean There", "a green tea"), newest memory first."""
    for fact in sorted(memories, key=lambda fact: fact.created_at, reverse=True):
        for rule in _PLACE_RULES:
            found = rule.search(fact.text)
            if found:
                return f"a break at {found.group(1).strip()}"
        drink = _drink(fact.text)
        if drink:
            return f"a {drink}"
    return None


def _drink(text: str) -> str | None:
    lowered = text.lower()
    liked = re.search(_LIKE.lower() + r"\b(.{0,40})", lowered)
    if liked is None or re.search(r"\b(?:don't|do not|never|hate)\b", lowered):
        return None
    found = [drink for drink in _DRINKS if re.search(rf"\b{drink}\b", liked.group(1))]
    return max(found, key=len) if found else None  # "green tea" over "tea"


def occasions(view: PersonView, now: datetime, policy: ProactivePolicy) -> list[Occasion]:
    start = session_start(view.activity, now, policy)
    if start is None or _cooling_down(view, now, policy):
        return []
    hours = int((view.activity[-1].at - start).total_seconds() // 3600)
    treat = preference(view.memories)
    offer = f"How about {treat}?" if treat else "How about a short break: some water, a stretch?"
    return [
        Occasion(
            user_id=view.user_id,
            trigger=TRIGGER,
            key=occasion_key(view.user_id, TRIGGER, start.isoformat()),
            why=f"You have been writing for more than {hours} hours without a half-hour pause.",
            text=f"You've been at it for more than {hours} hours. {offer}",
            due=now,
            details={"session_start": start.isoformat()},
        )
    ]


def _cooling_down(view: PersonView, now: datetime, policy: ProactivePolicy) -> bool:
    return any(sent.trigger == TRIGGER and now - sent.at < policy.session_cooldown for sent in view.sent)
