"""The faults of bench/soak.py, each at its moment of the load, each followed by a canary: a person
of its own who asks for what the fault broke (a reply, or an app build for the worker and Redis)
and must be answered. `recovered` says whether the canary was answered and the part runs again.

Telegram's faults on sends come in three kinds: before Telegram acts (429, or a 500 before the
message is stored), and after it delivered (`telegram_5xx_after`, `telegram_timeout_after`: the
message is stored, then the answer is a 500, or none before the bot's read timeout). The bot reads
the last two kinds alike, as maybe delivered, and never sends again by itself."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from bench.parts.common import log
from bench.parts.soak.kinds import DOUBT, kind_of
from bench.parts.soak.people import ANSWER_WAIT_S, POLL_S, Person, build, chat, say
from bench.parts.soak.procs import System
from bench.parts.soak.rows import fetch
from bench.parts.soak.unknown import SENDS
from tests.support.telegram_api import FailureKind, FakeTelegramBotApi

CANARY_BASE = 9_000_000
OUTAGE_S = 8.0  # how long Telegram answers 429 or 5xx
DOWN_S = 2.0  # how long a killed part stays down before it is started again
# Each fault at this fraction of the load's time, in this order.
SCHEDULE = {
    "telegram_429": 0.12,
    "telegram_5xx_after": 0.18,
    "worker_kill": 0.25,
    "postgres_terminate": 0.38,
    "telegram_timeout_after": 0.45,
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
        self, asks_for: Callable[[FakeTelegramBotApi, Person], Awaitable[None]], person: Person | None = None
    ) -> dict[str, Any]:
        began = time.monotonic()
        person = person or self.canary()
        await asks_for(self.api, person)
        ok = person.timeouts == 0
        return {"canary_answered": ok, "canary_s": round(time.monotonic() - began, 2)}

    async def telegram_429(self) -> dict[str, Any]:
        self.api.outage("retry_after", self.outage_s, retry_after=1)
        await asyncio.sleep(self.outage_s)
        return {"detail": f"every Bot API call answered 429 (retry_after 1) for {self.outage_s:.0f} s",
                **await self.answered(_chat)}  # fmt: skip

    async def telegram_5xx(self) -> dict[str, Any]:
        """The replies sent meanwhile never show, and are of unknown delivery to the bot; the canary's
        first reply too (a 500 of its own), and its next message brings the notice, whose button
        brings that reply, once."""
        self.api.outage("server_error", self.outage_s)
        await asyncio.sleep(self.outage_s)
        person = self.canary()
        self.api.fail_next("sendMessage", "server_error", chat_id=person.user)
        result = await self.answered(self._unknown_then_next, person)
        asked = person.resends == 1
        return {"detail": f"every Bot API call answered 500 for {self.outage_s:.0f} s; the canary's"
                          " first reply too, and it pressed \"send it again\"",
                "canary_resends": person.resends, "ok_extra": asked, **result}  # fmt: skip

    async def telegram_5xx_after(self) -> dict[str, Any]:
        return await self._after_delivery("server_error_after", "answered 500")

    async def telegram_timeout_after(self) -> dict[str, Any]:
        return await self._after_delivery("timeout_after", "never answered (past the bot's read timeout)")

    async def _after_delivery(self, kind: FailureKind, what: str) -> dict[str, Any]:
        """For `outage_s`, every sendMessage is delivered and then fails; the canary's first reply
        too. It shows once, and at the canary's next message the notice shows, which the canary
        (who has the reply) leaves alone."""
        ends = time.monotonic() + self.outage_s
        self.api.outage(kind, self.outage_s, methods=SENDS)
        person = self.canary()
        self.api.fail_next("sendMessage", kind, chat_id=person.user)
        result = await self.answered(self._unknown_then_next, person)
        await asyncio.sleep(max(0.0, ends - time.monotonic()))  # the people's sends, for the whole spell
        told = sum(1 for m in self.api.bot_messages(person.user) if kind_of(m.text) == DOUBT)
        hit = sum(1 for c in self.api.calls if c.failed == kind)
        return {"detail": f"sendMessage stored the message, then {what}, for {self.outage_s:.0f} s",
                "sends_hit": hit, "canary_told": told, "ok_extra": told == 1 and person.resends == 0,
                **result}  # fmt: skip

    async def _unknown_then_next(self, api: FakeTelegramBotApi, person: Person) -> None:
        """A message whose reply's send fails (the fault set for this chat), then, once the bot has
        recorded that reply as of unknown delivery, the next message."""
        say(api, person, f"canary {person.user}: are you there?")
        if not await self._doubt_recorded(person.user):
            person.timeouts += 1
        await chat(api, person, f"canary {person.user}: hello again")

    async def _doubt_recorded(self, chat_id: int) -> bool:
        deadline = time.monotonic() + ANSWER_WAIT_S
        while time.monotonic() < deadline:
            rows = await fetch(  # `dsn`: PostgreSQL's, or the SQLite file's path (rows.py)
                self.dsn,
                "SELECT count(*) FROM delivery_doubts WHERE platform = %s AND chat_id = %s",
                ("telegram", str(chat_id)),
            )
            if rows[0][0]:
                return True
            await asyncio.sleep(POLL_S)
        return False

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


Fault = Callable[[], Awaitable[dict[str, Any]]]


async def run_faults(
    actions: Mapping[str, Fault],
    moments: Mapping[str, float],
    started: float,
    load_s: float,
    beside: Collection[str] = (),
) -> list[dict[str, Any]]:
    """Each fault at its moment (a fraction of the load's time), in turn, those named in `beside`
    alongside the others; returns what each did and whether the system recovered."""
    order = sorted(actions, key=moments.__getitem__)
    alongside = [
        asyncio.create_task(one_fault(n, actions[n], moments[n], started, load_s))
        for n in order
        if n in beside
    ]
    results = [await one_fault(n, actions[n], moments[n], started, load_s) for n in order if n not in beside]
    results += [await task for task in alongside]
    return sorted(results, key=lambda r: moments[r["fault"]])


async def one_fault(name: str, action: Fault, moment: float, started: float, load_s: float) -> dict[str, Any]:
    await asyncio.sleep(max(0.0, started + moment * load_s - time.monotonic()))
    at = time.monotonic() - started
    log(f"fault: {name}")
    try:
        result = await action()
    except Exception as exc:  # a fault that cannot even be injected is reported, not hidden
        result = {"detail": f"{type(exc).__name__}: {exc}", "canary_answered": False}
    recovered = bool(result.pop("canary_answered")) and bool(result.pop("ok_extra", True))
    log(f"fault: {name} {'recovered' if recovered else 'NOT RECOVERED'} ({result.get('detail')})")
    took = time.monotonic() - started - at
    return {"fault": name, "at_s": round(at, 1), "took_s": round(took, 1), "recovered": recovered, **result}
