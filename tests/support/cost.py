"""Tests marked by what they cost, from the fixtures they use and where they live.

`make test-quick` runs the tests marked none of these (`-m "not slow"`): the unit tier, for the
inner loop. `make test` runs every test. A test that is slow for another reason (a process it
starts itself, a wait it must sit out) says so with `pytest.mark.procs` or `pytest.mark.slow`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

# marker -> the fixtures that bring the cost in (a test's fixture closure, so indirect use counts)
COST_FIXTURES: dict[str, frozenset[str]] = {
    "pg": frozenset({"pg_server"}),
    "browser": frozenset({"browser"}),
    "model": frozenset(
        {"minilm", "onnx_minilm", "onnx_export", "smollm2_dir", "tiny_dir", "tiny_model", "tiny", "scorer"}
    ),
    "procs": frozenset({"worker", "session_redis", "start_replica", "replica_api", "beat_redis"}),
}
# folders whose every test is of that cost
COST_FOLDERS: dict[str, Path] = {"bench": TESTS / "bench", "install": TESTS / "install"}
COST_MARKERS = (*COST_FIXTURES, *COST_FOLDERS)
# what `make test-quick` leaves out: every test with a cost marker also gets it (markers are
# registered in pyproject.toml)
SLOW = "slow"


def mark_by_cost(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        path = Path(str(item.path))
        found = {name for name, fixtures in COST_FIXTURES.items() if used & fixtures}
        found |= {name for name, folder in COST_FOLDERS.items() if path.is_relative_to(folder)}
        for name in sorted(found):
            item.add_marker(name)
        if found or any(item.get_closest_marker(name) for name in COST_MARKERS):
            item.add_marker(SLOW)


# The costliest first: a module's tests stay together on one xdist worker (--dist loadscope), which
# takes modules in collection order, so a long module collected last leaves the other worker idle
# while it runs. Heaviest kinds first; within a kind, and for the rest, the order is unchanged.
FIRST = ("bench", "procs", "model")


def heavy_first(items: list[pytest.Item]) -> None:
    rank: dict[Path, int] = {}
    for item in items:
        path = Path(str(item.path))
        kinds = [FIRST.index(name) for name in FIRST if item.get_closest_marker(name)]
        rank[path] = min(rank.get(path, len(FIRST)), *kinds, len(FIRST))
    items.sort(key=lambda item: rank[Path(str(item.path))])  # stable: modules stay whole, in order
