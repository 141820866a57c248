"""`kindred`: the command line. Settings are read here, once, and passed down; each command's
module (`chat`, `run`, `memory`, `workers`, `discord_sync`) asks the composition root for what it runs."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from bot.cli import backup as cli_backup
from bot.cli import discord_sync as cli_discord
from bot.cli import doctor as cli_doctor
from bot.cli import train as cli_train
from bot.cli import usage as cli_usage
from bot.cli import workers as cli_workers
from bot.cli.logs import setup_logging
from bot.core.errors import KindredError
from bot.core.memory.jsonl_format import MAX_FILE_BYTES
from bot.wiring.settings import Settings, load_settings, secret_values

EXIT_USAGE = 2


MAX_USER_CHARS = 128


def user_name(value: str) -> str:
    """A --user value: the key every memory of that person is kept under."""
    name = value.strip()
    if not name or len(name) > MAX_USER_CHARS or not name.isprintable():
        raise argparse.ArgumentTypeError(f"must be 1 to {MAX_USER_CHARS} printable characters")
    return name


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kindred", description="A companion that remembers.")
    commands = parser.add_subparsers(dest="command", required=True)

    chat = commands.add_parser("chat", help="chat in this terminal (or answer lines from a pipe)")
    chat.add_argument(
        "--user", required=True, type=user_name, help="who is talking; memories are kept per user"
    )

    commands.add_parser("migrate", help="apply pending database migrations")
    commands.add_parser("run", help="serve the chat platforms whose tokens are set")

    stats = commands.add_parser("stats", help="counts of users, turns, memories and feedback")
    stats.add_argument("--json", action="store_true", help="one JSON object")

    memory = commands.add_parser("memory", help="import, add files, search, list, forget and export memories")
    verbs = memory.add_subparsers(dest="verb", required=True)
    imp = verbs.add_parser(
        "import", help="import a JSONL file (text, speaker, timestamp, meta) or a Telegram Desktop export"
    )
    imp.add_argument("--user", required=True, type=user_name)
    imp.add_argument("--skip-invalid", action="store_true", help="import the valid lines anyway")
    imp.add_argument(
        "--format",
        choices=("jsonl", "telegram"),
        default="jsonl",
        help="telegram: Telegram Desktop's result.json (Export chat history, JSON)",
    )
    imp.add_argument(
        "--me",
        help="telegram: you in the export (your from_id, e.g. user123, or your name); "
        "an account export names you itself",
    )
    imp.add_argument(
        "--others",
        action="store_true",
        help="telegram: import the other people's messages too, under their names",
    )
    imp.add_argument(
        "--max-mib", type=float, default=MAX_FILE_BYTES / 2**20,
        help="refuse a JSONL file larger than this, before anything is stored",
    )  # fmt: skip
    imp.add_argument("file", type=Path)
    add = verbs.add_parser(
        "add-file",
        help="keep a document (PDF, .docx, plain text, Markdown) as if this person had sent it; "
        "returns once it is searchable",
    )
    add.add_argument("--user", required=True, type=user_name)
    add.add_argument("--json", action="store_true", help="what was stored, as one JSON object")
    add.add_argument("file", type=Path)
    find = verbs.add_parser("search", help="search one user's memories")
    find.add_argument("--user", required=True, type=user_name)
    find.add_argument("--k", type=int, default=10)
    find.add_argument("--json", action="store_true", help="one JSON line per result")
    find.add_argument("--queries", type=Path, help="a file with one query per line")
    find.add_argument("--explain", action="store_true", help="say why each memory was chosen")
    find.add_argument("query", nargs="?")
    why = verbs.add_parser("why", help="one reply's reward, part by part, and the memories it used")
    why.add_argument("--turn", required=True, type=int, help="the reply's turn id")
    why.add_argument("--json", action="store_true", help="one JSON object")
    listing = verbs.add_parser(
        "list", help="list one user's memories, oldest first: what they said, and what came of it"
    )
    listing.add_argument("--user", required=True, type=user_name)
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--all", action="store_true", help="the bot's replies too")
    forget = verbs.add_parser("forget", help="delete one memory by id")
    forget.add_argument("--user", required=True, type=user_name)
    forget.add_argument("id", type=int)
    export = verbs.add_parser("export", help="write one user's memories as JSONL to stdout or a file")
    export.add_argument("--user", required=True, type=user_name)
    export.add_argument("--output", type=Path, help="write here (whole, or not at all) instead of stdout")
    export.add_argument(
        "--max-mib", type=float, default=MAX_FILE_BYTES / 2**20,
        help="refuse an export larger than this (default: the most an import reads)",
    )  # fmt: skip
    cli_workers.add_commands(commands)
    cli_train.add_commands(commands)
    cli_doctor.add_command(commands)
    cli_backup.add_commands(commands)
    cli_discord.add_commands(commands)
    cli_usage.add_command(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
    except KindredError as exc:
        print(f"kindred: {exc}", file=sys.stderr)
        return EXIT_USAGE
    setup_logging(settings.general.log_level, secret_values(settings))
    handler = _handler(args)
    try:
        return asyncio.run(handler(settings, args))
    except KindredError as exc:
        print(f"kindred: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception:
        # Through the redacting log formatter: a library's message may quote a token or password.
        logging.getLogger("kindred").exception("kindred stopped on an unexpected error")
        return 1


def _handler(args: argparse.Namespace) -> Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]:
    from bot.cli import memory as cli_memory
    from bot.cli.chat import chat
    from bot.cli.run import run

    if args.command == "chat":
        return chat
    if args.command == "migrate":
        return _migrate
    if args.command == "run":
        return run
    if args.command == "stats":
        return _stats
    if args.command == "doctor":
        return cli_doctor.doctor
    if args.command == "usage":
        return cli_usage.usage
    if args.command in cli_backup.HANDLERS:
        return cli_backup.HANDLERS[args.command]
    if args.command in cli_workers.HANDLERS:
        return cli_workers.HANDLERS[args.command]
    if args.command == "train":
        return cli_train.TRAIN_HANDLERS[args.verb]
    if args.command == "adapters":
        return cli_train.ADAPTER_HANDLERS[args.verb]
    if args.command == "discord":
        return cli_discord.sync
    return cli_memory.HANDLERS[args.verb]


async def _migrate(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import migrate_store

    backend, applied, versions = await migrate_store(settings)
    done = ", ".join(map(str, applied)) if applied else "nothing to apply"
    print(f"{backend}: applied {done}; schema version {max(versions, default=0)}")
    return 0


async def _stats(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import open_store

    store = await open_store(settings)
    try:
        stats = await store.stats()
    finally:
        await store.close()
    if args.json:
        print(
            json.dumps(
                {
                    "backend": stats.backend,
                    "users": stats.users,
                    "turns": stats.turns,
                    "memories": stats.memories,
                    "feedback_events": stats.feedback_events,
                }
            )
        )
    else:
        print(
            f"backend {stats.backend}: {stats.users} users, {stats.turns} turns, "
            f"{stats.memories} memories, {stats.feedback_events} feedback events"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
