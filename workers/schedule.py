"""Beat's one schedule: every periodic job, its time from the settings (UTC crontabs).

Now: store upkeep (`kindred.store.upkeep`, KINDRED_UPKEEP_CRON): SQLite `PRAGMA optimize` and a
WAL checkpoint, or PostgreSQL `ANALYZE`; memory upkeep (`kindred.memory.upkeep`,
KINDRED_MEMORY_UPKEEP_CRON): external checks and consolidation for every person. Still to come,
each with its own issue and setting: nightly LoRA training ([learning]), proactive
check-ins. They are not scheduled before they exist.

Run exactly one beat: two would send every periodic job twice. `kindred beat` holds a Redis
lock (`kindred:beat`, SET NX with a TTL it renews) and refuses to start while another holds it.
"""

from __future__ import annotations

from typing import Any

from celery.schedules import crontab

from bot.app.settings import WorkerSettings
from bot.core.errors import ConfigError
from bot.core.jobs import queue_for

UPKEEP_JOB = "kindred.store.upkeep"
MEMORY_UPKEEP_JOB = "kindred.memory.upkeep"


def cron(expression: str, setting: str) -> crontab:
    """A 5-field crontab (minute hour day-of-month month day-of-week); ConfigError names `setting`."""
    fields = expression.split()
    if len(fields) != 5:
        raise ConfigError(f"invalid configuration: {setting}: needs 5 crontab fields, got {len(fields)}")
    minute, hour, day_of_month, month, day_of_week = fields
    try:
        schedule = crontab(minute, hour, day_of_week, day_of_month, month)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"invalid configuration: {setting}: {exc}") from None
    return schedule


def beat_schedule(workers: WorkerSettings) -> dict[str, dict[str, Any]]:
    return {
        "store-upkeep": {
            "task": UPKEEP_JOB,
            "schedule": cron(workers.upkeep_cron, "KINDRED_UPKEEP_CRON"),
            "args": ({},),
            "options": {"queue": queue_for(UPKEEP_JOB)},
        },
        "memory-upkeep": {
            "task": MEMORY_UPKEEP_JOB,
            "schedule": cron(workers.memory_upkeep_cron, "KINDRED_MEMORY_UPKEEP_CRON"),
            "args": ({},),
            "options": {"queue": queue_for(MEMORY_UPKEEP_JOB)},
        },
    }
