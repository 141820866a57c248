"""The samples of bench/parts/soak/resources.py, summarised per part and judged against the long soak's
targets (issue 32): memory growth ≤ 5 MB/hour per process after warm-up, and no leak of file
descriptors or connections.

The rules:
- Each process (pid) is judged on its own samples from the warm-up's end after it first showed (a
  part started again by a fault warms up again) to the end of the load (the drain after it is
  quiet, which would hide a leak). A pid with fewer than MIN_SAMPLES samples there, or whose samples
  span less than SPAN_SHARE of the load after warm-up, is left out: too little to fit a line to.
- Memory: the least-squares slope of its RSS, in MB/hour; the target holds when no process's slope
  is above RSS_TARGET_MB_PER_HOUR. A part's `growth_mb_per_hour` is one slope over all its judged
  processes, each around its own level, so that a restarted process starting low again is no leak.
- A count (fds, TCP connections of any state, the servers' sessions) leaks when the median of the
  last tenth of its samples exceeds the median of the first tenth by more than
  max(LEAK_MIN, LEAK_SHARE × the first): medians ride over a burst at either end, and the
  tolerance over a pool that opens a connection more at the end than at the start.
- Children recycled per task (Celery's max_tasks_per_child=1) are reported apart and not judged.

Levels (`first`, `last`, `max`) are a part's total at each sample, all its processes together,
over the whole run, the drain included.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from statistics import median
from typing import Any

import numpy as np

from bench.parts.soak.resources import Count, Sample

RSS_TARGET_MB_PER_HOUR = 5.0
MIN_SAMPLES = 5
SPAN_SHARE = 0.25
LEAK_MIN = 3.0
LEAK_SHARE = 0.1
COUNTS = ("fds", "tcp", "tcp_established", "threads")
# Which target a count's leak misses; the others are reported, not judged.
JUDGED_COUNTS = {"fds": "fds", "tcp": "connections"}
TARGETS = ("memory", "fds", "connections")
HOUR_S = 3600.0

Series = Sequence[tuple[float, float]]  # (seconds, value)
Miss = tuple[str, str]  # (target, what)


def slope_per_hour(runs: Iterable[Series]) -> float | None:
    """One least-squares slope over every run at once, each run around its own mean (its own level)."""
    dx, dy = [], []
    for run in runs:
        points = np.array(run, dtype=float).reshape(-1, 2)
        dx.append(points[:, 0] - points[:, 0].mean())
        dy.append(points[:, 1] - points[:, 1].mean())
    if not dx:
        return None
    x, y = np.concatenate(dx), np.concatenate(dy)
    spread = float((x * x).sum())
    return float((x * y).sum()) / spread * HOUR_S if spread > 0 else None


def tenths(values: Sequence[float]) -> tuple[float, float]:
    """The medians of the first and of the last tenth (one value at least)."""
    k = max(1, len(values) // 10)
    return float(median(values[:k])), float(median(values[-k:]))


def leaks(values: Sequence[float]) -> bool:
    first, last = tenths(values)
    return last - first > max(LEAK_MIN, LEAK_SHARE * first)


def rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def series(samples: Iterable[Sample], key: str) -> list[tuple[float, float]]:
    return [(s.at_s, float(getattr(s, key))) for s in samples]


def judged_pids(samples: Sequence[Sample], warm_up_s: float, until_s: float) -> dict[int, list[Sample]]:
    """Each pid's samples after its own warm-up, for the pids with enough of them."""
    by_pid: dict[int, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_pid[sample.pid].append(sample)
    least_span = SPAN_SHARE * max(0.0, until_s - warm_up_s)
    judged = {}
    for pid, mine in by_pid.items():
        kept = [s for s in mine if mine[0].at_s + warm_up_s <= s.at_s <= until_s]
        if len(kept) >= MIN_SAMPLES and kept[-1].at_s - kept[0].at_s >= least_span:
            judged[pid] = kept
    return judged


def levels(samples: Iterable[Sample], key: str) -> dict[str, float | None]:
    """First, last and highest total of the part, all its processes at one sample together."""
    totals: dict[float, float] = defaultdict(float)
    for sample in samples:
        totals[sample.at_s] += getattr(sample, key)
    values = [totals[at] for at in sorted(totals)]
    if not values:
        return {"first": None, "last": None, "max": None}
    return {"first": rounded(values[0], 1), "last": rounded(values[-1], 1), "max": rounded(max(values), 1)}


def process_misses(name: str, pid: int, mine: Sequence[Sample]) -> list[Miss]:
    misses = []
    growth = slope_per_hour([series(mine, "rss_mb")])
    if growth is not None and growth > RSS_TARGET_MB_PER_HOUR:
        misses.append(("memory", f"{name} (pid {pid}): RSS grows {growth:.1f} MB/hour"))
    for key, target in JUDGED_COUNTS.items():
        values = [float(getattr(s, key)) for s in mine]
        if leaks(values):
            first, last = tenths(values)
            misses.append((target, f"{name} (pid {pid}): {key} {first:g} → {last:g}"))
    return misses


def part_summary(
    name: str, samples: Sequence[Sample], warm_up_s: float, until_s: float
) -> tuple[dict[str, Any], list[Miss]]:
    judged = judged_pids(samples, warm_up_s, until_s)
    growths = [slope_per_hour([series(mine, "rss_mb")]) for mine in judged.values()]
    rss = {
        **levels(samples, "rss_mb"),
        "growth_mb_per_hour": rounded(slope_per_hour(series(m, "rss_mb") for m in judged.values())),
        "worst_mb_per_hour": rounded(max((g for g in growths if g is not None), default=None)),
    }
    summary: dict[str, Any] = {
        "processes": len({s.pid for s in samples}),
        "judged": len(judged),
        "rss_mb": rss,
    }
    for key in COUNTS:
        rises = [tenths([float(getattr(s, key)) for s in mine]) for mine in judged.values()]
        summary[key] = {
            **levels(samples, key),
            "per_hour": rounded(slope_per_hour(series(m, key) for m in judged.values()), 1),
            "worst_rise": max((last - first for first, last in rises), default=None),
        }
    misses = [miss for pid, mine in judged.items() for miss in process_misses(name, pid, mine)]
    return summary, misses


def server_summary(
    name: str, counts: Sequence[Count], warm_up_s: float, until_s: float
) -> tuple[dict[str, Any], list[Miss]]:
    answered = [(c.at_s, float(c.value)) for c in counts if c.value is not None]
    values = [v for _, v in answered]
    kept = [(at, v) for at, v in answered if warm_up_s <= at <= until_s]
    summary: dict[str, Any] = {
        "first": values[0] if values else None, "last": values[-1] if values else None,
        "max": max(values, default=None), "unanswered": len(counts) - len(answered),
        "judged": len(kept) >= MIN_SAMPLES,
    }  # fmt: skip
    if not summary["judged"]:
        return summary, []
    first, last = tenths([v for _, v in kept])
    summary.update(per_hour=rounded(slope_per_hour([kept]), 1), rise=last - first)
    return summary, [("connections", f"{name}: {first:g} → {last:g}")] if leaks([v for _, v in kept]) else []


def summary(
    samples: Sequence[Sample], counts: Sequence[Count], warm_up_s: float, until_s: float
) -> dict[str, Any]:
    """Per part and role, per server count, and the verdict; `met` is None for a target nothing
    could be judged against (a run too short)."""
    parts: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        parts[sample.name].append(sample)
    processes, recycled, misses = {}, {}, []
    for name, mine in parts.items():
        if any(s.recycled for s in mine):
            recycled[name] = {"processes": len({s.pid for s in mine}), "rss_mb": levels(mine, "rss_mb"),
                              "fds": levels(mine, "fds"), "tcp": levels(mine, "tcp")}  # fmt: skip
            continue
        processes[name], found = part_summary(name, mine, warm_up_s, until_s)
        misses += found
    by_server: dict[str, list[Count]] = defaultdict(list)
    for count in counts:
        by_server[count.name].append(count)
    servers = {}
    for name, theirs in by_server.items():
        servers[name], found = server_summary(name, theirs, warm_up_s, until_s)
        misses += found
    judged_processes = any(p["judged"] for p in processes.values())
    judged = {"memory": judged_processes, "fds": judged_processes,
              "connections": judged_processes or any(s["judged"] for s in servers.values())}  # fmt: skip
    met = {t: (not any(m[0] == t for m in misses)) if judged[t] else None for t in TARGETS}
    return {
        "warm_up_s": round(warm_up_s, 1),
        "judged_until_s": round(until_s, 1),
        "samples": len(samples),
        "targets": {
            "rss_growth_mb_per_hour": RSS_TARGET_MB_PER_HOUR,
            "leak": "median of the last tenth > median of the first tenth"
            f" + max({LEAK_MIN:g}, {LEAK_SHARE:.0%} of it)",
        },
        "met": {**met, "all": None if None in met.values() else all(met.values())},
        "misses": [what for _, what in misses],
        "processes": processes,
        "recycled": recycled,
        "servers": servers,
    }
