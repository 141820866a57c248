"""`kindred backup PATH` and `kindred restore PATH [--force]` (bot/wiring/backup.py does the work)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bot.wiring import backup as backups
from bot.wiring.settings import Settings


def add_commands(commands: Any) -> None:
    """Register `backup` and `restore` on `kindred`'s subparsers."""
    backup = commands.add_parser("backup", help="copy the store, adapters and unsaved words to a new folder")
    backup.add_argument("path", type=Path, help="a folder that does not exist yet (or is empty)")
    restore = commands.add_parser("restore", help="put a backup made by `kindred backup` back")
    restore.add_argument("path", type=Path)
    restore.add_argument("--force", action="store_true", help="replace a store that already holds data")


async def backup(settings: Settings, args: argparse.Namespace) -> int:
    manifest = await backups.backup(settings, args.path)
    files = manifest["files"]
    size = sum(entry["bytes"] for entry in files)
    print(f"kindred: backed up the {manifest['backend']} store and {len(files) - 1} other files "
          f"({size} bytes) to {args.path}")  # fmt: skip
    return 0


async def restore(settings: Settings, args: argparse.Namespace) -> int:
    manifest = await backups.restore(settings, args.path, force=args.force)
    print(f"kindred: restored the {manifest['backend']} store and its files from {args.path} "
          f"(backed up {manifest['created_at']}); start Kindred again")  # fmt: skip
    return 0


HANDLERS = {"backup": backup, "restore": restore}
