"""`kindred memory …`: import, add-file (bot/cli/add_file.py), search, list, forget, export. The
formats here are contracts."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from bot.cli.add_file import add_file
from bot.core.errors import InvalidInput, KindredError
from bot.core.learning.reward import reply_reward
from bot.core.memory import operations as memory_ops
from bot.core.memory.jsonl_format import (
    MAX_FILE_BYTES,
    ImportItem,
    bounded_lines,
    export_record,
    listing_record,
    parse_lines,
    size_words,
)
from bot.core.memory.kinds import UNLISTED
from bot.core.memory.person_records import export_lines
from bot.core.memory.recall import Recalled, document_source
from bot.core.models import DOCUMENT
from bot.importers import telegram_export
from bot.wiring.settings import Settings


def _print_json(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


async def import_file(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import load_embedder, open_store

    if args.format == "telegram":
        items, skipped = _telegram_items(args)
    else:
        parsed = _jsonl_items(args)
        if parsed is None:
            return 1
        items, skipped = parsed
    store = await open_store(settings)
    try:
        # Batches commit one by one: what an earlier run of this import stored is not stored twice.
        fresh = await memory_ops.not_yet_imported(store.memories, args.user, items)
        held = f", {len(items) - len(fresh)} already imported" if len(fresh) < len(items) else ""
        progress = ImportProgress.on_terminal(sys.stderr)
        try:
            ids = []
            if fresh:
                embedder = load_embedder(settings)
                ids = await memory_ops.import_items(
                    store.memories, embedder, args.user, fresh, on_progress=progress
                )
        except KindredError:
            progress.finish()
            print(f"kindred: the import stopped after {progress.done} of {len(fresh)}; those stay imported, "
                  "and the same command imports the rest", file=sys.stderr)  # fmt: skip
            raise
    finally:
        await store.close()
    progress.finish()
    print(f"imported {len(ids)} memories for {args.user}{skipped}{held}", file=sys.stderr)
    return 0


def _jsonl_items(args: argparse.Namespace) -> tuple[list[ImportItem], str] | None:
    try:
        with args.file.open("rb") as handle:
            parsed = parse_lines(bounded_lines(handle, str(args.file), int(args.max_mib * 2**20)))
    except OSError as exc:
        raise InvalidInput(f"cannot read {args.file}: {exc.strerror}") from None
    for error in parsed.errors:
        print(f"{args.file}: {error}", file=sys.stderr)
    if parsed.errors and not args.skip_invalid:
        print(
            f"kindred: {len(parsed.errors)} invalid line(s); nothing imported "
            "(fix them, or pass --skip-invalid to import the valid lines)",
            file=sys.stderr,
        )
        return None
    skipped = f", skipped {len(parsed.errors)} invalid" if parsed.errors else ""
    return parsed.items, skipped + parsed.aside_words()


def _telegram_items(args: argparse.Namespace) -> tuple[list[ImportItem], str]:
    """Every importable message of the export, or InvalidInput before anything is stored."""
    try:
        size = args.file.stat().st_size
        if size > telegram_export.MAX_EXPORT_BYTES:
            raise InvalidInput(
                f"{args.file} is {size / 2**20:,.0f} MiB; the limit is "
                f"{telegram_export.MAX_EXPORT_BYTES / 2**20:,.0f} MiB (export one chat at a time)"
            )
        raw = args.file.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {args.file}: {exc.strerror}") from None
    try:
        found = telegram_export.parse_export(raw, me=args.me, others=args.others)
    except InvalidInput as exc:
        raise InvalidInput(f"{args.file}: {exc}") from None
    if not found.items:
        what = f" (skipped {found.summary()})" if found.skipped else ""
        raise InvalidInput(f"{args.file}: no messages to import from {found.me}{what}")
    skipped = f", skipped {found.summary()}" if found.skipped else ""
    return found.items, f" (Telegram messages of {found.me}{skipped})"


class ImportProgress:
    """A one-line progress bar on stderr, redrawn after each batch; silent when not on a terminal."""

    WIDTH = 30

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self._started = time.monotonic()
        self.done = 0

    @classmethod
    def on_terminal(cls, stream: TextIO) -> ImportProgress:
        return cls(stream if stream.isatty() else None)

    def __call__(self, done: int, total: int) -> None:
        self.done = done
        if self._stream is None or total <= 0:
            return
        filled = self.WIDTH * done // total
        rate = done / max(time.monotonic() - self._started, 1e-6)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self._stream.write(f"\r[{bar}] {done:,}/{total:,} {rate:,.0f}/s")
        self._stream.flush()

    def finish(self) -> None:
        if self._stream is not None and self.done:
            self._stream.write("\n")
            self._stream.flush()


async def search(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import load_embedder, open_store
    from bot.wiring.kindred import policy

    if args.queries is not None:
        try:
            raw = args.queries.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise InvalidInput(f"cannot read {args.queries}: {exc.strerror}") from None
        queries = [line.strip() for line in raw.splitlines() if line.strip()]
    elif args.query and args.query.strip():
        queries = [args.query]
    else:
        raise InvalidInput("give a QUERY or --queries FILE")
    if args.k < 1:
        raise InvalidInput("--k must be at least 1")
    store = await open_store(settings)
    embedder = load_embedder(settings)
    try:
        scoring = policy(settings).scoring
        results = await memory_ops.search(store, embedder, args.user, queries, args.k, scoring=scoring)
    finally:
        await store.close()
    for result in results:
        memory = result.recalled.memory
        if args.json:
            row = {
                "query_index": result.query_index,
                "id": memory.id,
                "text": memory.text,
                "score": round(result.recalled.score, 6),
                "timestamp": memory.created_at.isoformat(),
                "meta": dict(memory.meta),
            }
            _print_json(row | ({"kind": memory.kind, "why": _why(result.recalled)} if args.explain else {}))
        else:
            print(
                f"[{result.query_index}] #{memory.id} {result.recalled.score:.4f} "
                f"{memory.created_at:%Y-%m-%d} {memory.text}"
            )
            if args.explain and result.recalled.why is not None:
                print(f"    {memory.kind}: {result.recalled.why.render()}")
    return 0


def _why(recalled: Recalled) -> dict[str, Any] | None:
    why = recalled.why
    if why is None:
        return None
    parts = dataclasses.asdict(why)
    return {name: round(value, 6) if isinstance(value, float) else value for name, value in parts.items()}


async def why(settings: Settings, args: argparse.Namespace) -> int:
    """`kindred memory why --turn ID`: one reply's reward, every part, and its memories' credit."""
    from bot.wiring.backends import open_store
    from bot.wiring.kindred import policy

    store = await open_store(settings)
    try:
        reward = await reply_reward(store.rewards, args.turn, policy(settings).reward)
    finally:
        await store.close()
    if reward is None:
        print(f"kindred: there is no turn #{args.turn}", file=sys.stderr)
        return 1
    if not args.json:
        print(reward.render())
        return 0
    weights = reward.weights
    _print_json(
        {
            "turn_id": reward.turn_id,
            "user": reward.user_id,
            "reward": round(reward.total, 6),
            "components": {
                "tool_uses": reward.tool_uses,
                "turns_followed": reward.turns_followed,
                "proactive_successes": reward.proactive_successes,
                "reaction": round(reward.reaction, 6),
                "reactions": reward.reactions,
            },
            "weights": {"alpha": weights.alpha, "beta": weights.beta, "gamma": weights.gamma},
            "memories": [
                {
                    "id": m.memory_id,
                    "share": round(m.share, 6),
                    "credit": round(m.credit, 6),
                    "total": round(m.total, 6),
                    "text": m.text,
                }
                for m in reward.memories
            ],
        }
    )
    return 0


async def list_memories(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import open_store

    # The bot's replies only with --all: the rest is what the person said and what came of it.
    left_out = () if args.all else tuple(UNLISTED)
    store = await open_store(settings)
    try:
        async for memory in memory_ops.all_memories(store.memories, args.user, without_kinds=left_out):
            if args.json:
                _print_json(listing_record(memory))
            else:
                when = f"{memory.created_at:%Y-%m-%d %H:%M}"
                who = document_source(memory, "the") if memory.kind == DOCUMENT else memory.speaker or "-"
                print(f"#{memory.id} {when} {who}: {memory.text}")
    finally:
        await store.close()
    return 0


async def forget(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import open_store

    store = await open_store(settings)
    try:
        gone = await store.memories.forget(args.user, args.id)
    finally:
        await store.close()
    if not gone:
        print(f"kindred: {args.user} has no memory #{args.id}", file=sys.stderr)
        return 1
    print(f"forgot memory #{args.id}", file=sys.stderr)
    return 0


async def export(settings: Settings, args: argparse.Namespace) -> int:
    """The export is written whole to a temporary file beside its target, then renamed (or copied
    to stdout): one past the size limit, or a store that fails part way, leaves no partial file
    and prints nothing."""
    from bot.wiring.backends import open_store

    limit = int(args.max_mib * 2**20)
    target = args.output.resolve() if args.output is not None else None
    partial = _partial_file(target)
    try:
        store = await open_store(settings)
        try:
            with partial.open("wb") as out:
                size = 0
                async for record in export_lines(store, args.user, export_record):
                    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
                    size += len(line)
                    if size > limit:
                        raise InvalidInput(_export_too_big(args.user, limit))
                    out.write(line)
        finally:
            await store.close()
        _publish(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return 0


def _partial_file(target: Path | None) -> Path:
    folder = target.parent if target is not None else None
    with tempfile.NamedTemporaryFile("wb", dir=folder, prefix=".kindred-export-", delete=False) as handle:
        return Path(handle.name)


def _publish(partial: Path, target: Path | None) -> None:
    """The whole export where it was asked for: renamed over the target, or copied to stdout."""
    if target is not None:
        os.replace(partial, target)
        return
    sys.stdout.flush()
    with partial.open("rb") as written:
        shutil.copyfileobj(written, sys.stdout.buffer)
    sys.stdout.buffer.flush()


def _export_too_big(user: str, limit: int) -> str:
    return (
        f"the export of {user} is larger than {size_words(limit)}; nothing was written "
        f"(--max-mib raises the limit; an import reads at most {size_words(MAX_FILE_BYTES)})"
    )


HANDLERS: dict[str, Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "import": import_file,
    "add-file": add_file,
    "search": search,
    "list": list_memories,
    "forget": forget,
    "export": export,
    "why": why,
}
