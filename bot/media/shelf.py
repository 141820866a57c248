"""The files people asked Kindred to keep (/privacy files keep), in the data dir:
`files/<person>/<digest>/<name>`. `<person>` is a digest of their id (an id may hold characters
no file system takes), `<digest>` the document's (the same file sent twice is kept once), `<name>`
the name it is shown by (core/media/documents.py: file_label, which has no path separators).

Each file is written whole (a temporary name, then renamed), and deleted when the person forgets
it (/forget file NAME) or everything (/forget all).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
from pathlib import Path

from bot.core.media.models import KeptDocument

FOLDER = "files"


class FolderShelf:
    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / FOLDER

    def folder(self, user_id: str) -> Path:
        return self.root / hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]

    async def put(self, user_id: str, kept: KeptDocument, data: bytes) -> None:
        await asyncio.to_thread(self._put, self.folder(user_id) / kept.digest, _safe(kept.name), data)

    async def remove(self, user_id: str, name: str) -> int:
        return await asyncio.to_thread(self._remove, self.folder(user_id), _safe(name).casefold())

    async def remove_all(self, user_id: str) -> int:
        return await asyncio.to_thread(self._remove_all, self.folder(user_id))

    @staticmethod
    def _put(folder: Path, name: str, data: bytes) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{name}.partial"
        partial.write_bytes(data)
        os.replace(partial, folder / name)

    @staticmethod
    def _remove(folder: Path, wanted: str) -> int:
        if not folder.is_dir():
            return 0
        removed = 0
        for document in folder.iterdir():
            for kept in document.iterdir() if document.is_dir() else ():
                if kept.name.casefold() == wanted:
                    kept.unlink(missing_ok=True)
                    removed += 1
            if document.is_dir() and not any(document.iterdir()):
                document.rmdir()
        return removed

    @staticmethod
    def _remove_all(folder: Path) -> int:
        if not folder.is_dir():
            return 0
        count = sum(1 for kept in folder.rglob("*") if kept.is_file())
        shutil.rmtree(folder, ignore_errors=True)
        return count


def _safe(name: str) -> str:
    """A name a file system takes: no separators, not hidden, not empty."""
    name = name.replace("/", "_").replace("\\", "_").lstrip(".")
    return name or "file"
