"""Telegram under load: many people chatting at once through a loopback Bot API server.

    python -m bench.telegram_load [--users 200] [--messages 5] [--rate 100] [--backend B] [--quick]
                                  [--profile OUT]

Two phases. Saturation: each simulated person sends a message, waits for the whole reply and sends
the next, all at once (throughput). At rate: as many other people write an even stream of --rate
messages a second (latency at that load). Replies come from a LOAD FIXTURE, a deterministic
generator that answers instantly, and memories are embedded by a hash fixture, so the run measures
the bot (python-telegram-bot, the core, the store), not a model. The bot runs in its own process.
Latency is from the moment an update is queued at the Bot API server to the first Bot API call that
shows reply text (a draft, in a private chat). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.parts.common import (
    exit_cleanly_on_sigterm,
    fresh_database,
    log,
    machine,
    millis,
    now_iso,
    server_for,
)
from bot.core.store import Store
from tests.support.telegram_api import Call, FakeTelegramBotApi

TARGETS = {"p95_added_latency_ms": 50.0, "messages_per_s": 100.0}
FIRST_USER = 10_000
BOT_START_S = 120
SHOWS_TEXT = ("sendMessageDraft", "sendMessage")
REPLY_WAIT_S = 120
# The buttons arrive with the final send or edit, or on their own when the text was already shown.
FINISHING = ("sendMessage", "editMessageText", "editMessageReplyMarkup")


class Finished:
    """Counts finished replies per chat: their 👍/👎 buttons are on, so they are stored, linked, shown."""

    def __init__(self, api: FakeTelegramBotApi) -> None:
        self.counts: dict[int, int] = {}
        self.changed: dict[int, asyncio.Event] = {}
        api.listeners.append(self._seen)

    def _seen(self, call: Call) -> None:
        if call.method in FINISHING and call.params.get("reply_markup"):
            chat = int(call.params["chat_id"])
            self.counts[chat] = self.counts.get(chat, 0) + 1
            self.changed.setdefault(chat, asyncio.Event()).set()

    async def wait(self, user: int, count: int) -> None:
        while self.counts.get(user, 0) < count:
            event = self.changed.setdefault(user, asyncio.Event())
            event.clear()
            await asyncio.wait_for(event.wait(), REPLY_WAIT_S)


async def person_closed_loop(
    api: FakeTelegramBotApi, finished: Finished, user: int, messages: int, queued: list[tuple[int, float]]
) -> None:
    """Writes, waits for the whole reply, writes again: how fast can the bot go?"""
    for n in range(messages):
        queued.append((user, time.monotonic()))
        api.private_message(user, f"message {n} from {user}: I like hiking and tea")
        await finished.wait(user, n + 1)


async def person_at_rate(
    api: FakeTelegramBotApi,
    finished: Finished,
    user: int,
    slots: list[float],
    queued: list[tuple[int, float]],
) -> None:
    """Writes at fixed moments whatever the bot does, as people do: what latency at that load?"""
    for n, moment in enumerate(slots):
        await asyncio.sleep(max(0.0, moment - time.monotonic()))
        queued.append((user, time.monotonic()))
        api.private_message(user, f"message {n} from {user}: I like hiking and tea")
    await finished.wait(user, len(slots))


def first_text_latencies(api: FakeTelegramBotApi, queued: list[tuple[int, float]]) -> list[float]:
    shown: dict[int, list[float]] = {}
    for call in api.calls:
        if call.method in SHOWS_TEXT and not call.failed:
            shown.setdefault(int(call.params["chat_id"]), []).append(call.at)
    latencies = []
    for user, at in queued:
        later = [moment for moment in shown.get(user, []) if moment >= at]
        latencies.append(min(later) - at)
    return latencies


@asynccontextmanager
async def store_location(backend: str, server_dsn: str | None) -> AsyncIterator[list[str]]:
    """Where the bot process keeps its store: bench/parts/telegram/bot.py arguments."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="kindred-tgload-") as folder:
            yield ["--sqlite", str(Path(folder) / "bench.db")]
        return
    assert server_dsn is not None
    async with fresh_database(server_dsn) as dsn:
        yield ["--postgres", dsn]


async def open_location(where: list[str]) -> Store:
    if where[0] == "--sqlite":
        from bot.store.sqlite.store import SqliteStore

        return await SqliteStore.open(Path(where[1]))
    from bot.store.postgres.store import PostgresStore

    return await PostgresStore.open(where[1])


@asynccontextmanager
async def bot_process(api: FakeTelegramBotApi, where: list[str], profile: Path | None) -> AsyncIterator[None]:
    """The bot runs in its own process, as in production: the Bot API server is not its CPU's work.
    With `profile`, py-spy samples it from ready to exit, into collapsed stacks at that path."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.parts.telegram.bot", "--api-base", api.base_url, "--token", api.token,
        *where,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    spy: asyncio.subprocess.Process | None = None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), BOT_START_S)
        if line.strip() != b"ready":
            raise SystemExit(f"the bot process did not start (exit {process.returncode})")
        spy = await start_py_spy(process.pid, profile) if profile else None
        yield
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
    if spy is not None:
        await spy.wait()  # py-spy writes its file when the process it samples has exited


async def start_py_spy(pid: int, out: Path) -> asyncio.subprocess.Process:
    """py-spy (PyPI; not a dependency) must be on PATH, and may need ptrace rights."""
    exe = shutil.which("py-spy")
    if exe is None:
        raise SystemExit("--profile needs py-spy on PATH: pip install py-spy")
    return await asyncio.create_subprocess_exec(
        exe, "record", "--pid", str(pid), "--rate", "250", "--format", "raw", "--output", str(out),
        stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def run_backend(
    backend: str, server_dsn: str | None, users: int, messages: int, rate: float, profile: Path | None
) -> dict[str, Any]:
    async with store_location(backend, server_dsn) as where, FakeTelegramBotApi() as api:
        finished = Finished(api)
        async with bot_process(api, where, profile):
            saturation = await phase(api, finished, FIRST_USER, users, messages, None)
            at_rate = await phase(api, finished, FIRST_USER + users, users, messages, rate)
        store = await open_location(where)
        try:
            stats = await store.stats()
        finally:
            await store.close()
    expected = 2 * users * messages
    lost = 2 * expected - stats.turns  # each message stores the person's turn and the reply
    p95 = at_rate["update_to_first_text"]["p95_ms"]
    return {
        "store": backend,
        "saturation": saturation,
        "at_rate": at_rate,
        "stored_turns": stats.turns,
        "lost": lost,
        "bot_api_calls": len(api.calls),
        "checks": {
            "p95_added_latency_ms": {"value": p95, "pass": p95 <= TARGETS["p95_added_latency_ms"]},
            "messages_per_s": {
                "value": saturation["messages_per_s"],
                "pass": saturation["messages_per_s"] >= TARGETS["messages_per_s"],
            },
            "nothing_lost": {"value": lost, "pass": lost == 0},
        },
    }


async def phase(
    api: FakeTelegramBotApi, finished: Finished, first: int, users: int, messages: int, rate: float | None
) -> dict[str, Any]:
    """Closed loop (rate None): the throughput. Open loop at `rate` messages/s: the latency."""
    queued: list[tuple[int, float]] = []
    started = time.monotonic()
    if rate is None:
        people = [person_closed_loop(api, finished, first + u, messages, queued) for u in range(users)]
    else:
        # Message n of person u goes out at slot n·users + u: an even stream of `rate` a second.
        people = [
            person_at_rate(
                api, finished, first + u, [started + (n * users + u) / rate for n in range(messages)], queued
            )
            for u in range(users)
        ]
    await asyncio.gather(*people)
    elapsed = time.monotonic() - started
    return {
        "offered_messages_per_s": rate if rate is not None else "as fast as replies come",
        "messages": users * messages,
        "seconds": round(elapsed, 3),
        "messages_per_s": round(users * messages / elapsed, 1),
        "update_to_first_text": millis(first_text_latencies(api, queued)),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results: dict[str, Any] = {}
    async with server_for(backends, args.database_url) as server_dsn:
        for backend in backends:
            log(f"{backend}: {args.users} people × {args.messages} messages")
            profile = args.profile.with_suffix(f".{backend}.txt") if args.profile else None
            results[backend] = await run_backend(
                backend, server_dsn, args.users, args.messages, args.rate, profile
            )
            log(f"{backend}: {results[backend]['checks']}")
    return {
        "benchmark": "telegram_load",
        "date": now_iso(),
        "machine": machine(),
        "settings": {
            "users": args.users,
            "messages_per_user": args.messages,
            "phases": "saturation: each person writes again once answered; at_rate: an even stream "
            "of --rate messages/s from as many people again",
            "rate": args.rate,
            "generator": "load fixture: deterministic, instant (not a model)",
            "embedder": "load fixture: hash vectors (not a model)",
            "bot_api": "loopback fake Bot API server and the simulated people in this process; "
            "the bot in its own (bench/parts/telegram/bot.py)",
        },
        "targets": TARGETS,
        "results": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--messages", type=int, default=5)
    parser.add_argument("--rate", type=float, default=TARGETS["messages_per_s"], help="messages/s offered")
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--database-url", help="a PostgreSQL server to make a database on")
    parser.add_argument("--quick", action="store_true", help="20 people × 3 messages at 20/s, SQLite only")
    parser.add_argument(
        "--profile", type=Path, help="sample the bot with py-spy: collapsed stacks in PROFILE.<store>.txt"
    )
    args = parser.parse_args()
    if args.quick:
        args.users, args.messages, args.backend, args.rate = 20, 3, "sqlite", 20.0
    exit_cleanly_on_sigterm()
    print(json.dumps(asyncio.run(main_async(args)), indent=2))


if __name__ == "__main__":
    main()
