"""A backup of everything Kindred keeps, and its restore (`kindred backup`, `kindred restore`): the
store (SQLite or PostgreSQL), the adapter versions' files and the unsaved-words spill, with a
manifest that names every file, its size and its SHA-256. The manifest holds no secret: not the
database URL, not a token.

What is left out can be made again: the converted model, the ONNX export, beat's schedule file.
A restore checks every file against the manifest before it changes anything, and refuses a store
that already holds data unless --force.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from bot.core.errors import ConfigError, InvalidInput
from bot.store import backup as dumps
from bot.wiring.settings import Settings

MANIFEST = "manifest.json"
FORMAT = 1
ADAPTERS, UNSAVED = "adapters", "unsaved"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Folders:
    """The data folders a backup carries, by their name inside it."""

    adapters: Path
    unsaved: Path

    @classmethod
    def of(cls, settings: Settings) -> Folders:
        return cls(settings.adapters_path, settings.data_dir / UNSAVED)

    def items(self) -> list[tuple[str, Path]]:
        return [(ADAPTERS, self.adapters), (UNSAVED, self.unsaved)]


async def backup(settings: Settings, target: Path) -> dict[str, Any]:
    """Copy the store and the data folders into the new folder `target`; returns the manifest."""
    await asyncio.to_thread(_new_folder, target)
    backend = settings.store.backend
    tool = f"sqlite3 {sqlite3.sqlite_version}"
    if backend == "sqlite":
        await asyncio.to_thread(dumps.backup_sqlite, settings.sqlite_path, target / dumps.SQLITE_FILE)
        database = dumps.SQLITE_FILE
    else:
        assert settings.store.database_url is not None
        tool = await dumps.backup_postgres(settings.store.database_url, target / dumps.POSTGRES_FILE)
        database = dumps.POSTGRES_FILE
    files = await asyncio.to_thread(_copy_folders, Folders.of(settings), target)
    manifest = {
        "format": FORMAT,
        "kindred": _kindred_version(),
        "created_at": datetime.now(UTC).isoformat(),
        "backend": backend,
        "database": database,
        "tool": tool,
        "files": files,
    }
    text = json.dumps(manifest, indent=2) + "\n"
    await asyncio.to_thread((target / MANIFEST).write_text, text, encoding="utf-8")
    return manifest


def _new_folder(target: Path) -> None:
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InvalidInput(f"{target} already exists and is not an empty folder; name a new one")
    target.mkdir(parents=True, exist_ok=True)


def _copy_folders(folders: Folders, target: Path) -> list[dict[str, Any]]:
    """Copies of the data folders into `target`; then every file of the backup, listed."""
    for name, folder in folders.items():
        if folder.is_dir():
            shutil.copytree(folder, target / name, symlinks=False)
    return _files(target)


async def restore(settings: Settings, source: Path, *, force: bool = False) -> dict[str, Any]:
    """Put the backup at `source` back; returns its manifest. Refuses a store holding data unless
    `force`, and a backup whose files do not match its manifest, before anything is changed."""
    manifest = await asyncio.to_thread(read_manifest, source)
    backend = settings.store.backend
    if manifest["backend"] != backend:
        raise ConfigError(
            f"invalid configuration: DATABASE_URL: the backup holds a {manifest['backend']} store, "
            f"and DATABASE_URL points at {backend}; restore it into a {manifest['backend']} store"
        )
    folders = Folders.of(settings)
    held = await _kept_rows(settings)
    adapter_files = await asyncio.to_thread(_has_files, folders.adapters)
    if (held or adapter_files) and not force:
        what = f"{held} rows of people's data" if held else "adapter files"
        raise InvalidInput(
            f"the store already holds {what}; a restore replaces it: stop Kindred, then add --force"
        )
    database = source / manifest["database"]
    if backend == "sqlite":
        await asyncio.to_thread(dumps.restore_sqlite, database, settings.sqlite_path)
    else:
        assert settings.store.database_url is not None
        await dumps.restore_postgres(settings.store.database_url, database)
    await asyncio.to_thread(_restore_folders, source, folders)
    return manifest


def _has_files(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())


def _restore_folders(source: Path, folders: Folders) -> None:
    _replace_folder(source / ADAPTERS, folders.adapters)
    if (source / UNSAVED).is_dir():
        # Merged, never replaced: words spilled since the backup are still waiting to be stored.
        shutil.copytree(source / UNSAVED, folders.unsaved, dirs_exist_ok=True, copy_function=_copy_new)


def read_manifest(source: Path) -> dict[str, Any]:
    """The backup's manifest, once every file it names is there with its size and checksum."""
    path = source / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(
            f"{source} is not a Kindred backup: {MANIFEST} unreadable ({type(exc).__name__})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidInput(f"{source}: {MANIFEST} is not a Kindred backup of format {FORMAT}")
    for entry in manifest["files"]:
        file = source / entry["path"]
        if not file.is_file() or file.stat().st_size != entry["bytes"] or _sha256(file) != entry["sha256"]:
            raise InvalidInput(
                f"{source}: {entry['path']} is missing or changed since the backup; nothing was restored"
            )
    return manifest


def _files(root: Path) -> list[dict[str, Any]]:
    return [
        {"path": file.relative_to(root).as_posix(), "bytes": file.stat().st_size, "sha256": _sha256(file)}
        for file in sorted(root.rglob("*"))
        if file.is_file()
    ]


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _replace_folder(source: Path, target: Path) -> None:
    """`target` becomes a copy of `source` (or goes, if the backup had none); swapped in at the end,
    so that a copy that fails half-way leaves the old folder as it was."""
    staged = target.with_name(target.name + ".restoring")
    shutil.rmtree(staged, ignore_errors=True)
    if source.is_dir():
        shutil.copytree(source, staged)
    if target.exists():
        shutil.rmtree(target)
    if staged.exists():
        staged.rename(target)


def _copy_new(source: str, target: str) -> None:
    if not Path(target).exists():
        shutil.copy2(source, target)


async def _kept_rows(settings: Settings) -> int:
    if settings.store.backend == "sqlite":
        return await asyncio.to_thread(dumps.sqlite_kept_rows, settings.sqlite_path)
    assert settings.store.database_url is not None
    return await dumps.postgres_kept_rows(settings.store.database_url)


def _kindred_version() -> str:
    try:
        return metadata.version("kindred")
    except metadata.PackageNotFoundError:
        return "unknown"
