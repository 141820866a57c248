"""`kindred memory …`: import, search, list, forget, export. The formats here are contracts."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from bot.config import Settings
from bot.core import memory_ops
from bot.core.errors import InvalidInput
from bot.core.memory_file import export_record, parse_lines


def _print_json(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


async def import_file(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import load_embedder, open_store

    try:
        with args.file.open("rb") as handle:
            parsed = parse_lines(handle)
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
        return 1
    store = await open_store(settings)
    embedder = load_embedder(settings)
    try:
        ids = await memory_ops.import_items(store, embedder, args.user, parsed.items)
    finally:
        await store.close()
    skipped = f", skipped {len(parsed.errors)} invalid" if parsed.errors else ""
    print(f"imported {len(ids)} memories for {args.user}{skipped}", file=sys.stderr)
    return 0


async def search(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import load_embedder, open_store

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
        results = await memory_ops.search(store, embedder, args.user, queries, args.k)
    finally:
        await store.close()
    for result in results:
        memory = result.recalled.memory
        if args.json:
            _print_json(
                {
                    "query_index": result.query_index,
                    "id": memory.id,
                    "text": memory.text,
                    "score": round(result.recalled.score, 6),
                    "timestamp": memory.created_at.isoformat(),
                    "meta": dict(memory.meta),
                }
            )
        else:
            print(
                f"[{result.query_index}] #{memory.id} {result.recalled.score:.4f} "
                f"{memory.created_at:%Y-%m-%d} {memory.text}"
            )
    return 0


async def list_memories(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_store

    store = await open_store(settings)
    try:
        async for memory in memory_ops.all_memories(store, args.user):
            if args.json:
                _print_json({"id": memory.id, "kind": memory.kind, **export_record(memory)})
            else:
                when = f"{memory.created_at:%Y-%m-%d %H:%M}"
                print(f"#{memory.id} {when} {memory.speaker or '-'}: {memory.text}")
    finally:
        await store.close()
    return 0


async def forget(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_store

    store = await open_store(settings)
    try:
        gone = await store.forget(args.user, args.id)
    finally:
        await store.close()
    if not gone:
        print(f"kindred: {args.user} has no memory #{args.id}", file=sys.stderr)
        return 1
    print(f"forgot memory #{args.id}", file=sys.stderr)
    return 0


async def export(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_store

    store = await open_store(settings)
    try:
        async for memory in memory_ops.all_memories(store, args.user):
            _print_json(export_record(memory))
    finally:
        await store.close()
    return 0


HANDLERS: dict[str, Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "import": import_file,
    "search": search,
    "list": list_memories,
    "forget": forget,
    "export": export,
}
