"""The calendar period a question names (core/memory/when.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.memory.when import Period, named_period


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("What painting did Melanie show on October 13, 2023?", Period(2023, 10, 13)),
        ("Who did Maria have dinner with on 3rd May 2023?", Period(2023, 5, 3)),
        ("What did Mel paint in their latest project in July 2023?", Period(2023, 7)),
        ("When did Melanie go camping in June?", Period(month=6)),
        ("How many times has Melanie gone to the beach in 2023?", Period(year=2023)),
    ],
)
def test_a_named_period_is_read_most_specific_first(question: str, period: Period) -> None:
    assert named_period(question) == period


@pytest.mark.parametrize(
    "question",
    ["May I ask what my job is?", "What did I do two weeks ago?", "Where did she move from 4 years ago?"],
)
def test_no_calendar_name_no_period(question: str) -> None:
    assert named_period(question) is None


def test_a_period_covers_its_own_days_only() -> None:
    july = Period(2023, 7)
    assert july.covers(datetime(2023, 7, 31, 23, tzinfo=UTC))
    assert not july.covers(datetime(2023, 8, 1, tzinfo=UTC))
    assert not july.covers(datetime(2022, 7, 9, tzinfo=UTC))
    assert Period(month=6).covers(datetime(2021, 6, 1, tzinfo=UTC))
    assert Period(2023, 10, 13).covers(datetime(2023, 10, 13, 20, tzinfo=UTC))
