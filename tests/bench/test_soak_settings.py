"""`bench.soak --long`'s settings: each its own unless given on the command line, the SQLite
store's disk sized for an hour's data (256 MiB filled and stayed full on 2026-12-06)."""

from __future__ import annotations

from bench.soak import parse


def test_long_mode_sizes_the_sqlite_disk_for_an_hour_unless_told() -> None:
    long = parse(["--long", "--store", "sqlite"])
    assert (long.disk_mb, long.minutes, long.replicas) == (2048, 60.0, 2)
    assert parse(["--long", "--store", "sqlite", "--disk-mb", "512"]).disk_mb == 512
    assert parse(["--quick", "--store", "sqlite"]).disk_mb == 256, "the 3-minute soak keeps its small disk"
