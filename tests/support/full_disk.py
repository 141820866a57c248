"""A disk that fills up, for the SQLite store's file: a real size-limited tmpfs, filled with a
file of zeros until the kernel answers ENOSPC, and freed by deleting that file. bench/soak.py's
`sqlite_disk_full` (bench/parts/soak/disk.py) fills and frees its own tmpfs with the same functions.

Where mounting is not permitted (not root, no CAP_SYS_ADMIN), the store's own connection is capped
with `PRAGMA max_page_count` at the file's size instead: SQLite then refuses to grow it with the
very error a full disk gives (SQLITE_FULL, "database or disk is full"), so the store's handling is
tested all the same; only the kernel's ENOSPC is not, and the test warns that it ran so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bot.store.sqlite.store import SqliteStore

SIZE_MB = 4
FILLER = "filler"
CHUNKS = (1 << 20, 4096, 1)  # a MiB at a time, then the last pages, then the last bytes
NO_CAP = 0xFFFFFFFE  # SQLite's own ceiling for max_page_count


def mount_tmpfs(folder: Path, size_mb: int) -> str:
    """Mount a tmpfs of `size_mb` at `folder`; returns why not, or "" once mounted."""
    folder.mkdir(parents=True, exist_ok=True)
    command = ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0700", "tmpfs", str(folder)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:  # no mount(8) at all
        return str(exc)
    said = done.stderr.strip().splitlines()
    return "" if done.returncode == 0 else said[0] if said else os.strerror(errno.EPERM)


def unmount(folder: Path) -> None:
    """Lazily: a file still open in it (a store not closed yet) cannot keep the tmpfs mounted."""
    subprocess.run(["umount", "--lazy", str(folder)], check=False)


def fill(folder: Path) -> int:
    """Write zeros into `folder` until the kernel answers ENOSPC; returns the bytes written."""
    written = 0
    fd = os.open(folder / FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in CHUNKS:
            with contextlib.suppress(OSError):
                while True:
                    written += os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return written


def free(folder: Path) -> None:
    (folder / FILLER).unlink(missing_ok=True)


@dataclass
class FullDisk:
    folder: Path
    mounted: bool
    why_not: str = ""  # why no tmpfs, when there is none

    async def fill_store(self, store: SqliteStore) -> None:
        """The disk full for `store`: its WAL emptied first (so that the next write must grow a
        file), then the tmpfs filled, or else its connection capped at the file's size."""
        await store.maintain()
        if self.mounted:
            fill(self.folder)
        else:
            await _cap(store, 1)  # SQLite raises it to the file's size: no page more

    async def free_store(self, store: SqliteStore) -> None:
        if self.mounted:
            free(self.folder)
        else:
            await _cap(store, NO_CAP)


async def _cap(store: SqliteStore, pages: int) -> None:
    # The cap is a setting of one connection, so only the store's own connection can carry it:
    # reached through its private attributes, here in a test's fallback only.
    await store._db._db.execute(f"PRAGMA max_page_count = {int(pages)}")


@contextlib.contextmanager
def full_disk(folder: Path, size_mb: int = SIZE_MB) -> Iterator[FullDisk]:
    """A tmpfs of `size_mb` at `folder`, unmounted afterwards whatever happened; where mounting is
    not permitted, the plain folder and the page cap (see the module's docstring)."""
    why = mount_tmpfs(folder, size_mb)
    if why:
        # Said where pytest's summary shows it: this run did not meet the kernel's ENOSPC.
        warnings.warn(f"no tmpfs ({why}): SQLite's page cap stands in for the full disk", stacklevel=3)
        yield FullDisk(folder, mounted=False, why_not=why)
        return
    try:
        yield FullDisk(folder, mounted=True)
    finally:
        unmount(folder)
