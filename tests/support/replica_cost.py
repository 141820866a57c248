"""What one bot replica costs: `python -m tests.support.replica_cost --replicas 2`.

Starts N replica processes (tests/support/replica.py: the real Telegram adapter in webhook mode,
the fixture model answering at once) on one SQLite file and the shared state in Redis
(KINDRED_SHARED_STATE_URL, default a redis-server of the run's own), behind the
round-robin front, and has the loopback Telegram post CHATS chats' MESSAGES messages (each chat's
next once the last is answered, as Telegram does). Prints one JSON line: each replica's resident
memory at idle and after the load, the CPU time all replicas spent per message, and throughput
(replies seen by the fake Bot API per second). The driver, the fake API and the front run in this
process, on the same machine: on two cores they take a share of the CPU the replicas could use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
from pathlib import Path

from redis.asyncio import Redis

from bot.adapters.telegram.secret import derived_webhook_secret
from tests.support.replica_procs import WEBHOOK_PATH as HOOK
from tests.support.replica_procs import ReplicaProcess, replica_env
from tests.support.round_robin import RoundRobinFront
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.webhook_push import WebhookPusher


async def measure(
    replicas: int, chats: int, messages: int, folder: Path, database_url: str | None = None
) -> dict[str, object]:
    bot_id = random.randint(10**8, 10**9)
    async with FakeTelegramBotApi(f"{bot_id}:AAHreplicaCostToken-0123456789abcdef") as api:
        env = replica_env(
            api.token,
            api.base_url,
            database_url or f"sqlite:///{folder / 'kindred.db'}",
            folder,
            KINDRED_USER_MESSAGES_PER_MINUTE="0",
            KINDRED_LOG_LEVEL="WARNING",
        )
        if "KINDRED_SHARED_STATE_URL" in os.environ:
            env["KINDRED_SHARED_STATE_URL"] = os.environ["KINDRED_SHARED_STATE_URL"]
        started = [await ReplicaProcess.start(env, folder / f"replica{n}.log") for n in range(replicas)]
        try:
            await asyncio.sleep(2.0)  # settled: imports done, first connections open
            idle = [r.rss_mb() for r in started]
            cpu = [r.cpu_s() for r in started]
            people = [bot_id * 1000 + n for n in range(chats)]
            async with (
                RoundRobinFront([r.port for r in started]) as front,
                WebhookPusher(
                    f"http://127.0.0.1:{front.port}{HOOK}", derived_webhook_secret(api.token)
                ) as telegram,
            ):

                async def chat(person: int) -> None:
                    for n in range(messages):
                        await telegram.deliver(api.private_message(person, f"message {n}"))

                began = time.monotonic()
                await asyncio.gather(*(chat(person) for person in people))
                total = chats * messages
                await api.wait_until(lambda: sum(len(api.texts(p)) for p in people) >= total, 300)
                elapsed = time.monotonic() - began
            busy = [r.rss_mb() for r in started]
            spent = sum(r.cpu_s() for r in started) - sum(cpu)
        finally:
            for replica in started:
                await replica.stop()
            if env["KINDRED_SHARED_STATE_URL"] != "local":
                cleaner = Redis.from_url(env["KINDRED_SHARED_STATE_URL"])
                async for key in cleaner.scan_iter(f"kindred:shared:*:{bot_id}:*"):
                    await cleaner.delete(key)
                await cleaner.aclose()
    return {
        "replicas": replicas,
        "store": "postgres" if database_url else "sqlite",
        "messages": total,
        "idle_rss_mb": [round(mb, 1) for mb in idle],
        "loaded_rss_mb": [round(mb, 1) for mb in busy],
        "cpu_ms_per_message": round(1000 * spent / total, 2),
        "throughput_msgs_per_s": round(total / elapsed, 1),
        "cpus": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument(
        "--postgres", action="store_true", help="the store on PostgreSQL (tests/support/pg.py)"
    )
    args = parser.parse_args()
    if "KINDRED_SHARED_STATE_URL" not in os.environ:
        from tests.support.redis_server import start_session_redis

        start_session_redis()
    with tempfile.TemporaryDirectory() as folder:
        result = asyncio.run(run(args, Path(folder)))
    print(json.dumps(result))


async def run(args: argparse.Namespace, folder: Path) -> dict[str, object]:
    if not args.postgres:
        return await measure(args.replicas, args.chats, args.messages, folder)
    from tests.support.pg import as_url, migrated_database, start_server

    server = start_server()
    try:
        url = as_url(await migrated_database(server))
        return await measure(args.replicas, args.chats, args.messages, folder, url)
    finally:
        server.close()


if __name__ == "__main__":
    main()
