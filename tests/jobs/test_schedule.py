"""The in-process schedule (`kindred run` without a broker): with a clock the test moves, each
entry's job is submitted once per due minute, never twice, and nothing after `close`."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.core.errors import QueueUnavailable
from bot.core.jobs import JobPayload
from bot.core.jobs.cron import ScheduleEntry, parse_cron
from bot.jobs.schedule import InProcessSchedule

START = datetime(2026, 12, 1, 3, 29, 50, tzinfo=UTC)
ENTRIES = [
    ScheduleEntry("nightly", parse_cron("30 3 * * *", "A"), "kindred.training.nightly"),
    ScheduleEntry("quarter", parse_cron("*/15 * * * *", "B"), "kindred.store.upkeep", {"why": "test"}),
]


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def recorder() -> tuple[list[tuple[str, JobPayload]], object]:
    sent: list[tuple[str, JobPayload]] = []

    def submit(name: str, payload: JobPayload) -> str:
        sent.append((name, payload))
        return "id"

    return sent, submit


def test_each_due_minute_is_submitted_once_and_never_again() -> None:
    sent, submit = recorder()
    clock = Clock(START)
    schedule = InProcessSchedule(ENTRIES, submit, clock=clock)  # type: ignore[arg-type]
    assert schedule.tick() == []  # 03:29: nothing due
    clock.at += timedelta(seconds=15)  # 03:30:05
    assert schedule.tick() == ["nightly", "quarter"]
    for seconds in (1, 20, 54):  # the same minute, looked at again
        clock.at = START + timedelta(seconds=10 + seconds)
        assert schedule.tick() == []
    clock.at = START - timedelta(minutes=5)  # the clock steps back over the due minute
    assert schedule.tick() == []
    clock.at = START + timedelta(minutes=1)
    assert schedule.tick() == []
    assert sent == [("kindred.training.nightly", {}), ("kindred.store.upkeep", {"why": "test"})]


def test_minutes_missed_while_asleep_send_each_entry_once() -> None:
    sent, submit = recorder()
    clock = Clock(START)
    schedule = InProcessSchedule(ENTRIES, submit, clock=clock)  # type: ignore[arg-type]
    schedule.tick()
    clock.at = START + timedelta(hours=2)  # 03:30, 03:45, 04:00, 04:15, 04:30, 04:45, 05:00, 05:15 passed
    assert schedule.tick() == ["nightly", "quarter"]
    assert len(sent) == 2


def test_a_queue_that_refuses_is_logged_and_the_schedule_goes_on() -> None:
    attempts: list[str] = []

    def refuse(name: str, payload: JobPayload) -> str:
        attempts.append(name)
        raise QueueUnavailable("the job queue cannot be reached")

    clock = Clock(START + timedelta(seconds=15))
    schedule = InProcessSchedule(ENTRIES, refuse, clock=clock)
    assert schedule.tick() == ["nightly", "quarter"] and len(attempts) == 2


async def test_the_loop_wakes_on_the_minute_and_stops_on_close() -> None:
    sent, submit = recorder()
    clock = Clock(START)
    woke = asyncio.Event()
    naps: list[float] = []

    async def sleep(seconds: float) -> None:
        # The test's clock moves by exactly the nap the schedule asked for: "on the minute".
        naps.append(seconds)
        clock.at += timedelta(seconds=seconds)
        woke.set()
        await asyncio.sleep(0)

    schedule = InProcessSchedule(ENTRIES, submit, clock=clock, sleep=sleep)  # type: ignore[arg-type]
    schedule.start()
    while len(sent) < 2:
        await woke.wait()
        woke.clear()
    await schedule.close()
    count, moved = len(sent), clock.at
    await asyncio.sleep(0.01)
    assert naps[0] == 10.0 and clock.at == moved and len(sent) == count
    assert [name for name, _ in sent[:2]] == ["kindred.training.nightly", "kindred.store.upkeep"]
