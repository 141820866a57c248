"""The SQLite store's disk full, a fault of bench/soak.py with `--store sqlite` (issue 32): the
store's one file sits on a size-limited tmpfs the soak mounts for itself, and the fault fills that
tmpfs to the last byte with a file of zeros for `full_s` (30 s in a long run), then deletes it.

A real filesystem that is really full, so the bot, the worker and beat meet the kernel's ENOSPC as
SQLite reports it (SQLITE_FULL), in every process at once. Mounting needs CAP_SYS_ADMIN: root, or
a user and mount namespace of the soak's own (`unshare -rm python -m bench.soak …`, as
tests/bench/test_soak_disk_full.py runs it where it is not root). Where neither is allowed the soak
says so and stops: ENOSPC injected at SQLite's VFS instead would need a VFS shim in each of the
processes (the standard library's sqlite3 cannot register one), which this soak does not have.

The canary writes while the disk is full and must be answered (with the plain notice that the
memory store is unavailable: the bot keeps the words), and once space is back its words must be
stored, and its next message answered as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.parts.soak.kinds import has_notice
from bench.parts.soak.people import ANSWER_WAIT_S, POLL_S, Person, chat
from bench.parts.soak.rows import fetch
from tests.support.full_disk import fill, free, mount_tmpfs, unmount
from tests.support.telegram_api import FakeTelegramBotApi

if TYPE_CHECKING:
    from bench.parts.soak.faults import Faults

# Faults of one store only, each at this fraction of the load's time. Not in SCHEDULE: CI's quick
# soak runs on PostgreSQL and runs every one of those.
STORE_FAULTS = {"sqlite_disk_full": 0.30}
FULL_S = 30.0


@contextlib.contextmanager
def tmpfs(folder: Path, size_mb: int) -> Iterator[Path]:
    """A tmpfs of `size_mb` at `folder`, unmounted afterwards whatever happened."""
    why = mount_tmpfs(folder, size_mb)
    if why:
        raise SystemExit(
            f"--store sqlite mounts a tmpfs for the store, and mounting was refused ({why}): run as"
            " root, or under `unshare -rm` (a user and mount namespace of its own)"
        )
    try:
        yield folder
    finally:
        unmount(folder)


def empty_wal(db: Path) -> None:
    """Fold the WAL into the file and truncate it, so that the next write must grow a file (best
    effort: a reader holding it back leaves it; the canary's notice says whether the fault bit)."""
    with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(db, timeout=5.0)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


class DiskFull:
    """`sqlite_disk_full`, on the store whose file is `faults.dsn`, full for `full_s`."""

    def __init__(self, faults: Faults, full_s: float) -> None:
        self.faults, self.db, self.full_s = faults, Path(faults.dsn), full_s

    async def sqlite_disk_full(self) -> dict[str, Any]:
        await asyncio.to_thread(empty_wal, self.db)
        filled = await asyncio.to_thread(fill, self.db.parent)
        ends = time.monotonic() + self.full_s
        person = self.faults.canary()
        try:
            await chat(self.faults.api, person, f"canary {person.user}: are you there? the disk is full")
            told = any(has_notice(m.text) for m in self.faults.api.bot_messages(person.user))
            await asyncio.sleep(max(0.0, ends - time.monotonic()))
        finally:
            free(self.db.parent)
        kept_s = await self._stored(person)
        result = await self.faults.answered(_chat, person)  # the same canary, after: as usual
        return {
            "detail": f"the store's tmpfs filled ({filled / 2**20:.0f} MiB of zeros) for {self.full_s:.0f} s,"
            " then freed",
            "told_while_full": told,  # its answer carried the store's notice: the fault bit
            "kept_words_stored_after_s": kept_s,
            "ok_extra": told and kept_s is not None,
            **result,
        }

    async def _stored(self, person: Person) -> float | None:
        """Seconds until the words the canary wrote while the disk was full are a stored turn."""
        began = time.monotonic()
        while time.monotonic() - began < ANSWER_WAIT_S:
            rows = await fetch(
                str(self.db), "SELECT count(*) FROM turns WHERE user_id = %s AND role = 'user'",
                (f"telegram:{person.user}",),
            )  # fmt: skip
            if rows[0][0]:
                return round(time.monotonic() - began, 1)
            await asyncio.sleep(POLL_S)
        return None


async def _chat(api: FakeTelegramBotApi, person: Person) -> None:
    await chat(api, person, f"canary {person.user}: the disk has room again, are you there?")
