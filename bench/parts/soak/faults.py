"""The faults of bench/soak.py, each at its moment of the load, each followed by a canary: a person
of its own who asks for what the fault broke (a reply, or an app build for the worker and Redis)
and must be answered. `recovered` says whether the canary was answered and the part runs again."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from bench.parts.common import log
from bench.parts.soak.people import Person, build, chat
from bench.parts.soak.procs import System
from tests.support.telegram_api import FakeTelegramBotApi

CANARY_BASE = 9_000_000
OUTAGE_S = 8.0  # how long Telegram answers 429 or 5xx
DOWN_S = 2.0  # how long a killed part stays down before it is started again
# Each fault at this fraction of the load's time, in this order.
SCHEDULE = {
    "telegram_429": 0.12,
    "worker_kill": 0.25,
    "postgres_terminate": 0.38,
    "redis_restart": 0.52,
    "telegram_5xx": 0.66,
    "bot_restart": 0.8,
}


@dataclass
class Faults:
    api: FakeTelegramBotApi
    system: System
    dsn: str
    canaries: list[Person]
    outage_s: float = OUTAGE_S

    def canary(self) -> Person:
        person = Person(CANARY_BASE + len(self.canaries), random.Random(len(self.canaries)))
        self.canaries.append(person)
        return person

    async def answered(
        self, asks_for: Callable[[FakeTelegramBotApi, Person], Awaitable[None]]
    ) -> dict[str, Any]:
        began = time.monotonic()
        person = self.canary()
        await asks_for(self.api, person)
        ok = person.timeouts == 0
        return {"canary_answered": ok, "canary_s": round(time.monotonic() - began, 2)}

    async def telegram_429(self) -> dict[str, Any]:
        self.api.outage("retry_after", self.outage_s, retry_after=1)
        await asyncio.sleep(self.outage_s)
        return {"detail": f"every Bot API call answered 429 (retry_after 1) for {self.outage_s:.0f} s",
                **await self.answered(_chat)}  # fmt: skip

    async def telegram_5xx(self) -> dict[str, Any]:
        self.api.outage("server_error", self.outage_s)
        await asyncio.sleep(self.outage_s)
        return {"detail": f"every Bot API call answered 500 for {self.outage_s:.0f} s",
                **await self.answered(_chat)}  # fmt: skip

    async def worker_kill(self) -> dict[str, Any]:
        self.system.held.add("worker")
        try:
            await asyncio.to_thread(self.system.worker.kill)
            await asyncio.sleep(DOWN_S)
            self.system.worker.start()
            ready_s = await asyncio.to_thread(self.system.worker.wait_ready)
        finally:
            self.system.held.discard("worker")
        return {"detail": f"SIGKILL to the worker's process group; restarted, ready in {ready_s:.1f} s",
                **await self.answered(build)}  # fmt: skip

    async def redis_restart(self) -> dict[str, Any]:
        await asyncio.to_thread(self.system.redis.stop)
        await asyncio.sleep(DOWN_S)
        await asyncio.to_thread(self.system.redis.start)
        result = await self.answered(build)
        return {"detail": "SIGKILL to redis-server (appendonly, fsync always), started again on its port",
                **result}  # fmt: skip

    async def postgres_terminate(self) -> dict[str, Any]:
        name = str(conninfo_to_dict(self.dsn)["dbname"])
        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
            cursor = await conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
            row = await cursor.fetchone()
        cut = row[0] if row else 0
        return {"detail": f"pg_terminate_backend on all {cut} sessions of the bot and the worker",
                **await self.answered(_chat)}  # fmt: skip

    async def bot_restart(self) -> dict[str, Any]:
        codes = []
        for bot in self.system.bots:
            self.system.held.add(bot.name)
            try:
                codes.append(await asyncio.to_thread(bot.terminate))
                bot.start()
                await asyncio.to_thread(bot.wait_ready)
            finally:
                self.system.held.discard(bot.name)
        clean = all(code == 0 for code in codes)
        return {"detail": f"SIGTERM to each bot replica (exit codes {codes}), then a new one",
                "clean_exit": clean, "ok_extra": clean, **await self.answered(_chat)}  # fmt: skip


async def _chat(api: FakeTelegramBotApi, person: Person) -> None:
    await chat(api, person, f"canary {person.user}: are you there?")


async def run_faults(faults: Faults, names: list[str], started: float, load_s: float) -> list[dict[str, Any]]:
    """Each named fault at its moment; returns what each did and whether the system recovered."""
    results = []
    for name in sorted(names, key=SCHEDULE.__getitem__):
        await asyncio.sleep(max(0.0, started + SCHEDULE[name] * load_s - time.monotonic()))
        at = time.monotonic() - started
        log(f"fault: {name}")
        try:
            result = await getattr(faults, name)()
        except Exception as exc:  # a fault that cannot even be injected is reported, not hidden
            result = {"detail": f"{type(exc).__name__}: {exc}", "canary_answered": False}
        recovered = bool(result.pop("canary_answered")) and bool(result.pop("ok_extra", True))
        log(f"fault: {name} {'recovered' if recovered else 'NOT RECOVERED'} ({result.get('detail')})")
        took = time.monotonic() - started - at
        results.append(
            {"fault": name, "at_s": round(at, 1), "took_s": round(took, 1), "recovered": recovered, **result}
        )
    return results
