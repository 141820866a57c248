"""A disk that fills up, for the SQLite store's file: a real size-limited tmpfs, filled with a
file of zeros until the kernel answers ENOSPC, and freed by deleting that file.

Where mounting is not permitted (not root, no CAP_SYS_ADMIN), the store's own connection is capped
with `PRAGMA max_page_count` at the file's size instead: SQLite then refuses to grow it with the
very error a full disk gives (SQLITE_FULL, "database or disk is full"), so the store's handling is
tested all the same; only the kernel's ENOSPC is not. `mounted` says which one a test got.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bot.store.sqlite.store import SqliteStore

SIZE = "4m"
FILLER = "filler"
CHUNK = 64 * 1024
NO_CAP = 0xFFFFFFFE  # SQLite's own ceiling for max_page_count


@dataclass
class FullDisk:
    folder: Path
    mounted: bool
    why_not: str = ""  # why no tmpfs, when there is none

    def fill(self) -> int:
        """Fill the filesystem to the last byte (a tmpfs); returns the bytes written."""
        if not self.mounted:
            return 0
        written = 0
        fd = os.open(self.folder / FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for chunk in (CHUNK, 4096, 512, 1):  # the last pages, then the last bytes
                with contextlib.suppress(OSError):
                    while True:
                        written += os.write(fd, b"\0" * chunk)
        finally:
            os.close(fd)
        return written

    def free(self) -> None:
        (self.folder / FILLER).unlink(missing_ok=True)

    async def fill_store(self, store: SqliteStore) -> None:
        """The disk full for `store`: its WAL emptied first (so that the next write must grow a
        file), then the tmpfs filled, or else its connection capped at the file's size."""
        await store.maintain()
        if self.mounted:
            self.fill()
        else:
            await _cap(store, 1)  # SQLite raises it to the file's size: no page more

    async def free_store(self, store: SqliteStore) -> None:
        if self.mounted:
            self.free()
        else:
            await _cap(store, NO_CAP)


async def _cap(store: SqliteStore, pages: int) -> None:
    # The cap is a setting of one connection, so only the store's own connection can carry it:
    # reached through its private attributes, here in a test's fallback only.
    await store._db._db.execute(f"PRAGMA max_page_count = {int(pages)}")


@contextlib.contextmanager
def full_disk(folder: Path, size: str = SIZE) -> Iterator[FullDisk]:
    """A tmpfs of `size` at `folder`, unmounted afterwards whatever happened; where mounting is
    not permitted, the plain folder and the page cap (see the module's docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    why = _mount(folder, size)
    if why:
        yield FullDisk(folder, mounted=False, why_not=f"no tmpfs ({why}): the page cap instead")
        return
    try:
        yield FullDisk(folder, mounted=True)
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)


def _mount(folder: Path, size: str) -> str:
    """Mount the tmpfs; returns why not, or "" once mounted."""
    command = ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:  # no mount(8) at all
        return str(exc)
    return "" if done.returncode == 0 else done.stderr.strip() or os.strerror(errno.EPERM)
