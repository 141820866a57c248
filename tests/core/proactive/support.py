"""What the proactive tests share: a simulated clock, people built from activity logs, a read counter."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time, timedelta
from typing import Any, SupportsIndex

from bot.core.proactive.models import Activity, PersonView, ProactiveSettings, RememberedFact, SentRecord

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)  # a Monday; London is on UTC in November
LONDON = "Europe/London"


@dataclass
class Clock:
    """The simulated clock: time moves only when a test moves it."""

    now: datetime = T0

    def advance(self, **span: float) -> datetime:
        self.now += timedelta(**span)
        return self.now


def settings(**changes: Any) -> ProactiveSettings:
    return replace(ProactiveSettings(enabled=True, timezone=LONDON), **changes)


def person(
    activity: Iterable[Activity] = (),
    memories: Iterable[RememberedFact] = (),
    sent: Iterable[SentRecord] = (),
    user_id: str = "u1",
    **setting_changes: Any,
) -> PersonView:
    return PersonView(
        user_id=user_id,
        settings=settings(**setting_changes),
        activity=tuple(sorted(activity, key=lambda a: a.at)),
        memories=tuple(memories),
        sent=tuple(sent),
    )


def messages_every(
    start: datetime, gap: timedelta, count: int, text: str = "still on the report"
) -> list[Activity]:
    return [Activity(at=start + i * gap, text=text) for i in range(count)]


def at_local(day: datetime, clock: time) -> datetime:
    """`day`'s date at `clock` in UTC (the tests' people in London in November: UTC)."""
    return datetime.combine(day.date(), clock, tzinfo=UTC)


class CountingTuple(tuple):  # type: ignore[type-arg]
    """A tuple that counts how often it is read: a plain counter, to prove nothing read a person's data."""

    def __new__(cls, items: Iterable[Any] = ()) -> CountingTuple:
        made = super().__new__(cls, tuple(items))
        made.reads = 0
        return made

    reads: int

    def __iter__(self) -> Iterator[Any]:
        self.reads += 1
        return super().__iter__()

    def __len__(self) -> int:
        self.reads += 1
        return super().__len__()

    def __getitem__(self, index: SupportsIndex | slice) -> Any:  # type: ignore[override]
        self.reads += 1
        return super().__getitem__(index)


@dataclass
class Counted:
    """A person whose activity and memories count their reads."""

    view: PersonView
    activity: CountingTuple = field(default_factory=CountingTuple)
    memories: CountingTuple = field(default_factory=CountingTuple)

    @classmethod
    def of(cls, view: PersonView) -> Counted:
        activity, memories = CountingTuple(view.activity), CountingTuple(view.memories)
        return cls(replace(view, activity=activity, memories=memories), activity, memories)

    @property
    def reads(self) -> int:
        return self.activity.reads + self.memories.reads
