"""Every periodic job, defined once: Celery beat sends these entries (`workers/schedule.py`), and
`kindred run` without a broker runs the same ones in-process (`bot/jobs/schedule.py`).

- `store-upkeep` (`kindred.store.upkeep`, KINDRED_UPKEEP_CRON): SQLite `PRAGMA optimize` and a WAL
  checkpoint, or PostgreSQL `ANALYZE`;
- `memory-upkeep` (`kindred.memory.upkeep`, KINDRED_MEMORY_UPKEEP_CRON): external checks and
  consolidation for every person;
- `training-nightly` (`kindred.training.nightly`, KINDRED_TRAIN_CRON; left out with
  KINDRED_TRAIN_ENABLED=off): dataset → KTO + LoRA → gate → promote ([learning]);
- `canary` (`kindred.learning.canary`, KINDRED_TRAIN_CANARY_CRON, every 10 minutes; left out with
  KINDRED_TRAIN_ENABLED=off): the running canary's settled replies enter its test ([canary]);
- `proactive-beat` (`kindred.proactive.beat`, KINDRED_PROACTIVE_CRON, every 5 minutes): reminders
  that are due, and the check-ins of people who turned them on ([proactive]).
"""

from __future__ import annotations

from bot.core.jobs.cron import ScheduleEntry, parse_cron
from bot.wiring.memory_jobs import UPKEEP_JOB as MEMORY_UPKEEP_JOB
from bot.wiring.proactive_jobs import BEAT_JOB as PROACTIVE_BEAT_JOB
from bot.wiring.settings import WorkerSettings
from bot.wiring.settings.training import TrainingSettings

STORE_UPKEEP_JOB = "kindred.store.upkeep"
NIGHTLY_JOB = "kindred.training.nightly"
CANARY_JOB = "kindred.learning.canary"


def schedule_entries(workers: WorkerSettings, training: TrainingSettings) -> list[ScheduleEntry]:
    """Beat's entries; ConfigError names the variable of a crontab that does not parse."""
    entries = [
        ScheduleEntry(
            "store-upkeep", parse_cron(workers.upkeep_cron, "KINDRED_UPKEEP_CRON"), STORE_UPKEEP_JOB
        ),
        ScheduleEntry(
            "memory-upkeep",
            parse_cron(workers.memory_upkeep_cron, "KINDRED_MEMORY_UPKEEP_CRON"),
            MEMORY_UPKEEP_JOB,
        ),
        ScheduleEntry(
            "proactive-beat",
            parse_cron(workers.proactive_cron, "KINDRED_PROACTIVE_CRON"),
            PROACTIVE_BEAT_JOB,
        ),
    ]
    if training.enabled:
        entries.append(
            ScheduleEntry("training-nightly", parse_cron(training.cron, "KINDRED_TRAIN_CRON"), NIGHTLY_JOB)
        )
        entries.append(
            ScheduleEntry("canary", parse_cron(training.canary_cron, "KINDRED_TRAIN_CANARY_CRON"), CANARY_JOB)
        )
    return entries
