"""bench/parts/soak/leaks.py: the soak's resource figures and its verdict, on series whose answer is
known: an hour at a sample every 5 s, the first 10 minutes warm-up, as `bench/soak.py --long` runs."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bench.parts.soak.leaks import judged_pids, leaks, slope_per_hour, summary, tenths
from bench.parts.soak.resources import Count, Sample

EVERY_S = 5.0
WARM_UP_S = 600.0
HOUR_S = 3600.0

Level = Callable[[float], float]


def flat(value: float) -> Level:
    return lambda at: value


def line(start: float, per_hour: float, since_s: float = 0.0) -> Level:
    return lambda at: start + per_hour * (at - since_s) / HOUR_S


def warming(low: float, high: float, since_s: float) -> Level:
    """From `low` to `high` over the warm-up after `since_s`, then steady: imports and caches filling."""
    return lambda at: low + (high - low) * min(1.0, (at - since_s) / WARM_UP_S)


FDS, TCP = flat(40), flat(6)


def process(
    name: str, pid: int, start_s: float, end_s: float, *, rss: Level, fds: Level = FDS, tcp: Level = TCP,
    recycled: bool = False,
) -> list[Sample]:  # fmt: skip
    samples, at = [], start_s
    while at <= end_s:
        samples.append(
            Sample(at, name, pid, round(rss(at), 2), round(fds(at)), round(tcp(at)), 4, 3, recycled)
        )
        at += EVERY_S
    return samples


def counts(name: str, value: Callable[[float], int | None]) -> list[Count]:
    return [Count(n * EVERY_S, name, value(n * EVERY_S)) for n in range(int(HOUR_S / EVERY_S) + 1)]


def test_one_slope_over_processes_each_at_its_own_level() -> None:
    assert slope_per_hour([[(0, 100.0), (1800, 101.0), (3600, 102.0)]]) == pytest.approx(2.0)
    # A process restarted low and growing as fast as its predecessor: 6 MB/hour, where one line
    # through both would fall.
    before = [(0.0, 100.0), (60.0, 100.1), (120.0, 100.2)]
    after = [(200.0, 50.0), (260.0, 50.1), (320.0, 50.2)]
    assert slope_per_hour([before, after]) == pytest.approx(6.0)
    assert slope_per_hour([before + after]) < 0  # type: ignore[operator]
    assert slope_per_hour([]) is None and slope_per_hour([[(5.0, 1.0)]]) is None


def test_a_count_leaks_when_its_last_tenth_rises_past_the_tolerance() -> None:
    assert tenths([40.0] * 18 + [90.0, 90.0]) == (40.0, 90.0)
    # One burst at the end is no leak: the median of the last tenth rides over it.
    assert not leaks([40.0] * 29 + [90.0])
    # A pool that holds two connections more at the end than at the start: within max(3, 10 %).
    assert not leaks([40.0] * 20 + [42.0] * 10)
    assert not leaks([100.0] * 20 + [110.0] * 10)
    assert leaks([100.0] * 20 + [111.0] * 10)
    assert leaks([float(v) for v in range(40, 60)])


def test_each_pid_is_judged_after_its_own_warm_up_and_a_short_one_is_left_out() -> None:
    first = process("bot0", 10, 0, 2000, rss=flat(100))
    restarted = process("bot0", 11, 2000, HOUR_S, rss=flat(90))
    late = process("bot0", 12, 3300, HOUR_S, rss=flat(90))
    judged = judged_pids(first + restarted + late, WARM_UP_S, HOUR_S)
    assert sorted(judged) == [10, 11]
    assert (judged[10][0].at_s, judged[10][-1].at_s) == (600, 2000)
    assert (judged[11][0].at_s, judged[11][-1].at_s) == (2600, HOUR_S)


def test_a_steady_system_meets_every_target() -> None:
    samples = (
        process("bot0", 10, 0, 1995, rss=warming(80, 150, 0))
        # Started again by a fault: low again, and warming up again, which is no leak.
        + process("bot0", 11, 2000, HOUR_S, rss=warming(60, 140, 2000))
        + process("worker", 20, 0, HOUR_S, rss=line(70, 3.0), tcp=flat(3))
        + process("worker-child", 21, 0, HOUR_S, rss=flat(90))
        + process("worker-child", 22, 0, HOUR_S, rss=flat(95))
    )
    server = counts("postgres_connections", lambda at: None if 1500 <= at < 1510 else 12)
    report = summary(samples, server, WARM_UP_S, HOUR_S)
    assert report["met"] == {"memory": True, "fds": True, "connections": True, "all": True}
    assert report["misses"] == []
    bot = report["processes"]["bot0"]
    assert (bot["processes"], bot["judged"], bot["rss_mb"]["growth_mb_per_hour"]) == (2, 2, 0.0)
    assert bot["rss_mb"] | {"growth_mb_per_hour": 0} == {
        "first": 80.0, "last": 140.0, "max": 150.0, "growth_mb_per_hour": 0, "worst_mb_per_hour": 0.0
    }  # fmt: skip
    assert report["processes"]["worker"]["rss_mb"]["growth_mb_per_hour"] == pytest.approx(3.0)
    # The part's levels are its processes together.
    assert report["processes"]["worker-child"]["rss_mb"]["first"] == 185.0
    assert report["processes"]["worker-child"]["fds"]["first"] == 80.0
    pg = report["servers"]["postgres_connections"]
    assert (pg["first"], pg["max"], pg["unanswered"], pg["judged"], pg["rise"]) == (12, 12, 2, True, 0)


def test_growth_and_leaks_are_named_by_process_and_a_recycled_child_is_not_judged() -> None:
    samples = (
        process("bot0", 10, 0, HOUR_S, rss=flat(150), fds=line(40, 30.0))
        + process("worker-child", 21, 0, HOUR_S, rss=flat(90))
        + process("worker-child", 22, 0, HOUR_S, rss=line(90, 10.0))
        + process("beat", 30, 0, HOUR_S, rss=flat(60), tcp=line(2, 12.0))
    )
    for n in range(30):  # a child per training task, each growing fast for its minute
        samples += process("training-child", 100 + n, n * 120, n * 120 + 60, rss=line(500, 9000, n * 120),
                           recycled=True)  # fmt: skip
    server = counts("postgres_connections", lambda at: 12) + counts(
        "redis_clients", lambda at: 5 + int(at // 180)
    )
    report = summary(samples, server, WARM_UP_S, HOUR_S)
    # Medians of the tenths of 10:00–60:00: fds 40 + 30/hour at 12:27 and at 57:32; Redis's clients
    # 5 + one each 3 minutes.
    assert report["met"] == {"memory": False, "fds": False, "connections": False, "all": False}
    assert report["misses"] == [
        "bot0 (pid 10): fds 46 → 69",
        "worker-child (pid 22): RSS grows 10.0 MB/hour",
        "beat (pid 30): tcp 4 → 14",
        "redis_clients: 9 → 24",
    ]
    child = report["processes"]["worker-child"]["rss_mb"]
    assert (child["growth_mb_per_hour"], child["worst_mb_per_hour"]) == (pytest.approx(5.0, abs=0.01), 10.0)
    assert report["processes"]["bot0"]["fds"]["per_hour"] == pytest.approx(30.0, abs=0.5)
    assert "training-child" not in report["processes"]
    assert report["recycled"]["training-child"]["processes"] == 30
    assert report["recycled"]["training-child"]["rss_mb"]["max"] == pytest.approx(650.0, abs=0.1)


def test_a_run_too_short_to_judge_says_so() -> None:
    samples = process("bot0", 10, 0, 300, rss=line(100, 500.0))
    report = summary(samples, counts("redis_clients", lambda at: None), WARM_UP_S, 300)
    assert report["met"] == {"memory": None, "fds": None, "connections": None, "all": None}
    assert report["processes"]["bot0"]["judged"] == 0
    assert report["processes"]["bot0"]["rss_mb"]["growth_mb_per_hour"] is None
    assert report["servers"]["redis_clients"] == {
        "first": None, "last": None, "max": None, "unanswered": 721, "judged": False
    }  # fmt: skip
