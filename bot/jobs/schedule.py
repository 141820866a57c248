"""The schedule without a broker: `kindred run` with in-process jobs runs beat's entries itself.

Pure asyncio, no Celery: once a minute (on the minute, by the clock it is given) every entry whose
crontab is due is submitted, once. A minute is never submitted twice, even when the clock steps
back; minutes missed while the loop slept too long (a suspended laptop) are made up with one
submission per entry that was due in them, as beat sends a late job once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta

from bot.core.errors import JobError, QueueUnavailable
from bot.core.jobs import JobPayload
from bot.core.jobs.cron import ScheduleEntry

log = logging.getLogger(__name__)

Submit = Callable[[str, JobPayload], object]
Clock = Callable[[], datetime]
Sleep = Callable[[float], Awaitable[None]]
# Made-up minutes are looked for this far back at most: a job missed days ago is not worth a burst.
MAX_CATCH_UP = timedelta(hours=24)
MINUTE = timedelta(minutes=1)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _minute(at: datetime) -> datetime:
    return at.astimezone(UTC).replace(second=0, microsecond=0)


class InProcessSchedule:
    """Submits each entry's job when its crontab is due, until `close`."""

    def __init__(
        self,
        entries: Sequence[ScheduleEntry],
        submit: Submit,
        *,
        clock: Clock = _utc_now,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.entries = tuple(entries)
        self._submit = submit
        self._clock = clock
        self._sleep = sleep
        self._last: datetime | None = None  # the latest minute already looked at
        self._task: asyncio.Task[None] | None = None

    def tick(self, now: datetime | None = None) -> list[str]:
        """Submit what is due from the minute after the last one seen up to `now`'s minute.
        Returns the entries submitted (for the log and the tests)."""
        current = _minute(now or self._clock())
        if self._last is not None and current <= self._last:
            return []
        first = current if self._last is None else max(self._last + MINUTE, current - MAX_CATCH_UP)
        self._last = current
        due: list[ScheduleEntry] = []
        for entry in self.entries:
            minute = first
            while minute <= current:
                if entry.cron.matches(minute):
                    due.append(entry)
                    break
                minute += MINUTE
        for entry in due:
            self._send(entry)
        return [entry.name for entry in due]

    def _send(self, entry: ScheduleEntry) -> None:
        try:
            self._submit(entry.job, dict(entry.payload or {}))
            log.info("schedule: %s sent %s", entry.name, entry.job)
        except (JobError, QueueUnavailable) as exc:
            log.warning("schedule: %s could not send %s: %s", entry.name, entry.job, exc)

    def start(self) -> None:
        if self.entries and self._task is None:
            self._task = asyncio.create_task(self._run(), name="kindred-schedule")

    async def _run(self) -> None:
        while True:
            self.tick()
            now = self._clock()
            await self._sleep(max((_minute(now) + MINUTE - now).total_seconds(), 0.05))

    async def close(self) -> None:
        """Stop: nothing is submitted after this returns."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
