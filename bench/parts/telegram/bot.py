"""The bot side of bench/telegram_load.py, in a process of its own, as it would run in production.

    python -m bench.parts.telegram.bot --api-base URL --token TOKEN (--sqlite PATH | --postgres DSN)

Serves until SIGTERM with the load fixtures (instant generator, hash embedder). Prints "ready".
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path

from bench.parts.telegram.fixtures import build_adapter
from bot.core.store import Store


async def serve(args: argparse.Namespace) -> None:
    store: Store
    if args.sqlite:
        from bot.store.sqlite.store import SqliteStore

        store = await SqliteStore.open(Path(args.sqlite))
    else:
        from bot.store.postgres.store import PostgresStore

        store = await PostgresStore.open(args.postgres)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    adapter = build_adapter(args.api_base, args.token, store)
    await adapter.start()
    print("ready", flush=True)
    try:
        await stop.wait()
    finally:
        await adapter.stop()
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--token", required=True)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sqlite")
    where.add_argument("--postgres")
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
