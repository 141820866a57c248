"""Crontab expressions as beat reads them: the in-process schedule must fire when beat would."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from celery.schedules import crontab

from bot.core.errors import ConfigError
from bot.core.jobs.cron import parse_cron

NIGHT = datetime(2026, 12, 1, 3, 30, tzinfo=UTC)  # a Tuesday


@pytest.mark.parametrize(
    ("expression", "due"),
    [
        ("30 3 * * *", True),
        ("31 3 * * *", False),
        ("*/15 * * * *", True),
        ("0-40/10 2-4 * * *", True),
        ("30 3 1 12 2", True),
        ("30 3 * dec tue", True),
        ("30 3 * * 0,6", False),
        ("30 3 2 * 2", False),  # day-of-month and day-of-week must both match, as in Celery
        ("5,30 3 * * mon-fri", True),
    ],
)
def test_a_minute_is_due_exactly_when_celery_says_so(expression: str, due: bool) -> None:
    assert parse_cron(expression, "X").matches(NIGHT) is due
    minute, hour, day, month, weekday = expression.split()
    celery = crontab(minute, hour, weekday, day, month)
    assert (
        NIGHT.minute in celery.minute
        and NIGHT.hour in celery.hour
        and NIGHT.day in celery.day_of_month
        and NIGHT.month in celery.month_of_year
        and NIGHT.isoweekday() % 7 in celery.day_of_week
    ) is due


@pytest.mark.parametrize(
    "bad", ["5 3 * *", "61 3 * * *", "every night", "*/0 * * * *", "5-1 * * * *", "0 3 * * 7"]
)
def test_a_bad_expression_names_its_setting(bad: str) -> None:
    with pytest.raises(ConfigError, match=r"^invalid configuration: KINDRED_TRAIN_CRON: "):
        parse_cron(bad, "KINDRED_TRAIN_CRON")
