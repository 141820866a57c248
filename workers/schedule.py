"""Beat's one schedule: the entries of `bot/wiring/schedule.py` (every periodic job, its time from the
settings, UTC crontabs) as Celery's `beat_schedule`. Without a broker, `kindred run` runs the same
entries itself (`bot/jobs/schedule.py`).

Run exactly one beat: two would send every periodic job twice. `kindred beat` holds a Redis
lock (`kindred:beat`, SET NX with a TTL it renews) and refuses to start while another holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from celery.schedules import crontab

from bot.core.errors import ConfigError
from bot.core.jobs import queue_for
from bot.core.jobs.cron import Cron, ScheduleEntry


def cron(expression: Cron) -> crontab:
    """Celery's crontab of an expression that `bot.core.jobs.cron.parse_cron` already checked."""
    minute, hour, day_of_month, month, day_of_week = expression.expression.split()
    try:
        return crontab(minute, hour, day_of_week, day_of_month, month)
    except (ValueError, TypeError) as exc:  # a form our parser takes and Celery's does not
        raise ConfigError(f"invalid configuration: crontab {expression.expression!r}: {exc}") from None


def beat_schedule(entries: Sequence[ScheduleEntry]) -> dict[str, dict[str, Any]]:
    return {
        entry.name: {
            "task": entry.job,
            "schedule": cron(entry.cron),
            "args": (dict(entry.payload or {}),),
            "options": {"queue": queue_for(entry.job)},
        }
        for entry in entries
    }
