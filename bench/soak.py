"""The whole system under load and faults for a bounded time; checks that nothing was lost or
duplicated.

    python -m bench.soak [--quick | --seconds N] [--people N] [--replicas N] [--faults a,b,...]
    python -m bench.soak --long [--minutes 60 --rate 60]   # with a night's training and every fault
    python -m bench.soak --store sqlite …   # one SQLite file on a tmpfs, and its disk full

The system: the bot (bench/parts/soak/bot.py: `kindred run` in webhook mode with the load fixtures),
a Celery worker (build and default queues) and beat on a redis-server of the soak's own, and the
store (bench/parts/soak/store.py): PostgreSQL + pgvector (the embedded server), or one SQLite file
on a tmpfs the soak mounts (root, or `unshare -rm`). Hundreds of simulated people
(bench/parts/soak/people.py) write through the loopback Bot API, which pushes their updates to the
bot's webhook as Telegram does (tests/support/telegram_push.py), through a round-robin front on one
address. Faults (bench/parts/soak/faults.py, long_faults.py, disk.py) hit it at set moments.
Afterwards bench/parts/soak/checks.py compares what each person was owed with the fake API's log and
the store. Progress goes to stderr; the last thing on stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.parts.common import log, machine, now_iso
from bench.parts.soak import checks, leaks, resources, unknown
from bench.parts.soak.disk import FULL_S, STORE_FAULTS, DiskFull
from bench.parts.soak.faults import SCHEDULE, Fault, Faults, run_faults
from bench.parts.soak.kinds import RING, kind_of
from bench.parts.soak.long_faults import BESIDE, LONG_FAULTS, LONG_ONLY, MORE_FAULTS, LongFaults
from bench.parts.soak.people import Person, bot_kinds, live
from bench.parts.soak.procs import System
from bench.parts.soak.store import STORES, Place, elsewhere, for_store, soak_store
from tests.support.round_robin import RoundRobinFront
from tests.support.telegram_api import AFTER_DELIVERY, FakeTelegramBotApi
from tests.support.telegram_push import WebhookPusher

FIRST_USER = 20_000
DRAIN_S = 180.0  # after the load: for the last answers and the reminders' ring (beat runs each minute)
WARM_UP = 0.2  # of the load's time, before resources count towards the verdict
WARM_UP_LONG_S = 600.0  # --long: the first 10 minutes (issue 32)
SAMPLE_EVERY_S = 2.0
SAMPLE_EVERY_LONG_S = 5.0
SHOWS_TEXT = ("sendMessageDraft", "sendMessage")
SETTLE_S = 10.0  # after a fault's canary is answered, before latency counts as "outside faults"


async def supervise(system: System) -> None:
    while True:
        await asyncio.to_thread(system.restart_crashed)
        await asyncio.sleep(1.0)


def latencies_ms(
    api: FakeTelegramBotApi,
    people: Sequence[Person],
    started: float,
    away: Sequence[tuple[float, float]] = (),
) -> list[float]:
    """From a chat message queued at the Bot API to the first text the bot shows for it; none of
    those sent within `away` (seconds of the load: the faults and a settling time after each)."""
    shown: dict[int, list[float]] = {}
    for call in api.calls:
        if call.method in SHOWS_TEXT and (not call.failed or call.failed in AFTER_DELIVERY):
            shown.setdefault(int(call.params["chat_id"]), []).append(call.at)
    out = []
    for person in people:
        moments = shown.get(person.user, [])
        for at in person.chat_sent:
            if any(start <= at - started <= end for start, end in away):
                continue
            i = bisect.bisect_left(moments, at)
            if i < len(moments):
                out.append((moments[i] - at) * 1000.0)
    return out


def owed_everything(api: FakeTelegramBotApi, people: Sequence[Person]) -> bool:
    """Everything owed shows, or was sent and failed before the fake stored it (a 500): the bot
    never sends that again by itself, so no wait brings it."""
    failed = unknown.failed_sends(api)
    for person in people:
        kinds = Counter(k for _, k in bot_kinds(api, person.user))
        kinds += unknown.never_shown(failed.get(person.user, []))
        if any(kinds[kind] < n for kind, n in person.expected.items()):
            return False
        if kinds[RING] < len(person.reminders):
            return False
    return True


async def drain(api: FakeTelegramBotApi, pusher: WebhookPusher, people: Sequence[Person]) -> float:
    began = time.monotonic()
    while time.monotonic() - began < DRAIN_S:
        if pusher.pending == 0 and owed_everything(api, people):
            break
        await asyncio.sleep(1.0)
    await asyncio.sleep(2.0)  # anything late and extra (a duplicate) shows too
    return time.monotonic() - began


async def soak(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    async with soak_store(args.store, folder, database_url=args.database_url, disk_mb=args.disk_mb) as place:
        log(f"store: {place.label}")
        async with FakeTelegramBotApi() as api:
            training = "training_oom" in args.faults
            system = System(folder, place.url, api.token, api.base_url, args.replicas, training)
            front = RoundRobinFront(system.bot_ports)
            pusher = WebhookPusher(api, "http://pending")
            await front.start()
            pusher.origin = front.origin
            await pusher.start()
            try:
                await asyncio.to_thread(system.start)
                return await under_load(args, api, pusher, system, place)
            finally:
                await asyncio.to_thread(system.stop)
                await pusher.stop()
                await front.stop()


async def under_load(
    args: argparse.Namespace, api: FakeTelegramBotApi, pusher: WebhookPusher, system: System, place: Place
) -> dict[str, Any]:
    rng = random.Random(args.seed)
    people = [
        Person(FIRST_USER + n, random.Random(rng.random()), remind_in=args.remind_in)
        for n in range(args.people)
    ]
    canaries: list[Person] = []
    faults = Faults(api, system, place.place, canaries, outage_s=min(8.0, max(3.0, args.seconds * 0.05)))
    full_s = args.disk_full_s or min(FULL_S, max(3.0, args.seconds * 0.05))  # scaled as outage_s is
    started = time.monotonic()
    until = started + args.seconds
    think_s = args.people / args.rate
    every_s = SAMPLE_EVERY_LONG_S if args.long else SAMPLE_EVERY_S
    series = args.logs / "resources.jsonl" if args.logs is not None else None
    sampler = resources.Sampler(
        lambda: resources.roots_of(system), started, every_s, place.dsn, system.redis.url, series
    )
    sampling = asyncio.create_task(sampler.run())
    supervisor = asyncio.create_task(supervise(system))
    log(
        f"load: {args.people} people for {args.seconds} s (about {args.rate:g} actions/s), "
        f"faults {args.faults}"
    )
    fault_run = asyncio.create_task(
        run_faults(fault_actions(faults, args.faults, full_s), MOMENTS, started, args.seconds, BESIDE)
    )
    await asyncio.gather(
        *(live(api, p, until, think_s, reminds=n < args.reminders) for n, p in enumerate(people))
    )
    load_s = time.monotonic() - started
    fault_results = await fault_run
    everyone = people + canaries
    log(f"load done in {load_s:.0f} s; draining")
    drained_s = await drain(api, pusher, everyone)
    sampling.cancel()
    supervisor.cancel()
    alive = {p.name: p.pid is not None for p in system.processes()}
    if args.logs is not None:
        dump_chats(api, everyone, started, args.logs / "chats.json")
    stored, doubts = await checks.stored(api, place.place, everyone), await unknown.doubts(place.place)
    warm_up_s = WARM_UP_LONG_S if args.long else WARM_UP * load_s
    # Copies: a sample the cancelled sampler's thread was still taking may land meanwhile.
    used = leaks.summary(list(sampler.samples), list(sampler.counts), warm_up_s, load_s)
    result = report(args, api, pusher, everyone, fault_results, stored, doubts,
                    load_s, drained_s, used, alive, started)  # fmt: skip
    result["settings"]["store"] = place.label
    # Parts that exited on their own and were started again, as the deployment's restart policy does.
    result["crashed_and_restarted"] = dict(system.crashes)
    return result


# What every soak runs (CI's short one too), and with --long a night's training killed mid-way;
# with --store sqlite its disk full, and no postgres_terminate (bench/parts/soak/store.py: ONLY_ON).
FAULTS = dict(sorted({**SCHEDULE, **MORE_FAULTS}.items(), key=lambda item: item[1]))
MOMENTS = {**FAULTS, **LONG_ONLY, **STORE_FAULTS}


def fault_actions(faults: Faults, names: Sequence[str], full_s: float) -> dict[str, Fault]:
    longer, disk = LongFaults(faults), DiskFull(faults, full_s)
    owners: dict[str, object] = {**dict.fromkeys(LONG_FAULTS, longer), **dict.fromkeys(STORE_FAULTS, disk)}
    return {name: getattr(owners.get(name, faults), name) for name in names}


def dump_chats(api: FakeTelegramBotApi, people: Sequence[Person], started: float, path: Path) -> None:
    """Every chat, what was owed (with when, in seconds of the load) and what shows: for a look later."""
    chats = [
        {
            "person": p.user,
            "owed": [[kind, round(at - started, 1)] for kind, at in zip(p.sequence, p.asked_at, strict=True)],
            "shown": [
                [m.data["message_id"], kind_of(m.text), (m.text or "")[:80]] for m in api.bot_messages(p.user)
            ],
        }
        for p in people
    ]
    path.write_text(json.dumps(chats, indent=1, ensure_ascii=False))


def percentile(values: Sequence[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 1) if values else None


def percentiles(values: Sequence[float]) -> dict[str, Any]:
    return {f"p{q}_ms": percentile(values, q) for q in (50, 95, 99)} | {"n": len(values)}


def outside(windows: Sequence[tuple[float, float]], load_s: float) -> list[tuple[float, float]]:
    """The load's time outside `windows` (seconds of the load), as windows."""
    gaps, at = [], 0.0
    for start, end in sorted(windows):
        if start > at:
            gaps.append((at, start))
        at = max(at, end)
    return [*gaps, (at, load_s + 3600.0)]


def report(
    args: argparse.Namespace,
    api: FakeTelegramBotApi,
    pusher: WebhookPusher,
    people: Sequence[Person],
    faults: list[dict[str, Any]],
    stored: dict[str, Any],
    doubts: unknown.Doubts,
    load_s: float,
    drained_s: float,
    used: dict[str, Any],
    alive: dict[str, bool],
    started: float,
) -> dict[str, Any]:
    answers, rings = checks.answers(api, people, doubts), checks.rings(api, people, doubts)
    order = checks.order(api, people, doubts)
    links, accepted = checks.app_links(api, people), checks.deliveries(pusher)
    lost = (answers["lost"] + rings["lost"] + stored["feedback_lost"] + stored["user_turns_missing"]
            + accepted["not_accepted"])  # fmt: skip
    duplicated = (answers["duplicated"] + rings["duplicated"] + links["duplicated"]
                  + stored["feedback_duplicated"] + stored["user_turns_stored_twice"])  # fmt: skip
    waits = latencies_ms(api, people, started)
    # Outside the faults: from each fault's start to SETTLE_S after its canary was answered; a
    # night's training is a window of its own, reported apart outside the other faults.
    spans = {f["fault"]: (f["at_s"], f["at_s"] + f["took_s"] + SETTLE_S) for f in faults}
    training = [span for name, span in spans.items() if name in BESIDE]
    others = [span for name, span in spans.items() if name not in BESIDE]
    calm = latencies_ms(api, people, started, others + training)
    while_training = latencies_ms(api, people, started, others + outside(training, load_s))
    messages = sum(len(p.sequence) for p in people)
    delivery_unknown = unknown.report(
        api, doubts, resends=sum(p.resends for p in people),
        answers=answers["command_answers_unknown_not_shown"], reactions=stored["reactions_unlinked"],
    )  # fmt: skip
    return {
        "benchmark": "soak",
        "date": now_iso(),
        "machine": machine(),
        "replicas": args.replicas,
        "lost": lost,
        "duplicated": duplicated,
        # Sends of unknown delivery that nobody confirmed (shown or not, the bot cannot tell), command
        # answers that never showed after such a send, and reactions that could not be linked.
        "unknown": delivery_unknown["unknown"],
        "chats_out_of_order": order["chats_out_of_order"],
        "faults": faults,
        "all_recovered": all(f["recovered"] for f in faults),
        "throughput_msgs_per_s": round(messages / load_s, 2),
        "p95_ms": percentile(waits, 95),
        "p99_ms": percentile(waits, 99),
        "p50_ms": percentile(waits, 50),
        "outside_faults": percentiles(calm),
        "during_training": percentiles(while_training) if training else None,
        # Every process's memory, fds, connections and threads, and the servers' connections, per
        # part, with the verdict (bench/parts/soak/leaks.py); the time series in resources.jsonl.
        "resources": used,
        "checks": {
            "order": order,
            "answers": answers,
            "reminders": rings,
            "app_links": links,
            "webhook": accepted,
            "store": stored,
            "delivery_unknown": delivery_unknown,
        },
        "processes_alive_at_end": alive,
        "settings": {
            "people": args.people,
            "canaries": len(people) - args.people,
            "seconds": round(load_s, 1),
            "drain_s": round(drained_s, 1),
            "offered_actions_per_s": args.rate,
            "messages_sent": messages,
            "reactions_and_presses": stored["reactions_sent"],
            "reminders": args.reminders,
            "remind_in": args.remind_in,
            "mode": "webhook (the fake Bot API pushes, per chat in order, retrying non-2xx)",
            "generator": "load fixture: deterministic, instant (not a model)",
            "embedder": "load fixture: hash vectors (not a model)",
            "app_builds": "rules only (KINDRED_APP_MODEL_PASS=false)",
            "redis": "redis-server of the soak's own: appendonly yes, appendfsync always",
            "visibility_timeout_s": 60,
            "throughput": "offered load (closed loop with think time), not a saturation figure",
            "latency": "chat message queued at the Bot API → first text shown (draft or message)",
        },
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=600.0, help="how long the load runs (default 10 min)"
    )
    parser.add_argument("--quick", action="store_true", help="3 minutes, 200 people")
    parser.add_argument(
        "--long",
        action="store_true",
        help="--minutes (60) at --rate 60 actions/s (about 50 messages/s), 600 people, 2 replicas, "
        "a night's training, every fault",
    )
    parser.add_argument("--minutes", type=float, help="how long the load runs, in minutes")
    parser.add_argument("--people", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20.0, help="actions a second, all people together")
    parser.add_argument("--reminders", type=int, default=10, help="people who ask for a reminder in 1 minute")
    parser.add_argument(
        "--remind-in", default="1 minute", help="when the reminders are due (beat runs each minute)"
    )
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument(
        "--faults",
        help=f"comma-separated, of {', '.join(MOMENTS)} (default: all the store has but --long's)",
    )
    parser.add_argument("--store", choices=STORES, default="postgres")
    parser.add_argument("--database-url", help="a PostgreSQL server (with pgvector) to make a database on")
    parser.add_argument("--disk-mb", type=int, default=256, help="--store sqlite: the tmpfs's size")
    parser.add_argument(
        "--disk-full-s",
        type=float,
        help=f"sqlite_disk_full: how long (default {FULL_S:g} s, less in a short run)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--logs", type=Path, help="keep the processes' logs in this folder")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.people = 180.0, 200
    if args.long:
        long_mode(parser, args, argv or sys.argv[1:])
    if args.minutes is not None:
        args.seconds = args.minutes * 60.0
    if args.faults is None:
        args.faults = ",".join(for_store([*FAULTS, *STORE_FAULTS], args.store))
    args.faults = [name for name in args.faults.split(",") if name]
    unknown = set(args.faults) - set(MOMENTS)
    if unknown:
        parser.error(f"unknown faults: {', '.join(sorted(unknown))}")
    if wrong := elsewhere(args.faults, args.store):
        parser.error(wrong)
    return args


# disk_mb: the SQLite store's tmpfs. An hour at ~20 messages a second writes ~0.7 GB (the database
# was ~216 MB after 18 minutes on 2026-12-06, when 256 MiB filled and stayed full): the fault, not
# the run's own data, must be what fills it.
LONG = {"minutes": 60.0, "rate": 60.0, "people": 600, "replicas": 2, "disk_mb": 2048}


def long_mode(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str]) -> None:
    """--long's settings, each unless given on the command line; every fault unless --faults."""
    for name, value in LONG.items():
        if f"--{name.replace('_', '-')}" not in argv:
            setattr(args, name, value)
    if "--faults" not in argv:
        args.faults = ",".join(for_store(MOMENTS, args.store))
    if args.quick:
        parser.error("--long and --quick exclude each other")


async def stopped_by_sigterm(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The soak, cancelled by SIGTERM (a test's timeout) so that every process it started is stopped."""
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    return await soak(args, folder)


def main() -> None:
    args = parse()
    if args.logs is not None:
        args.logs.mkdir(parents=True, exist_ok=True)
        result = asyncio.run(stopped_by_sigterm(args, args.logs))
    else:
        with tempfile.TemporaryDirectory(prefix="kindred-soak-") as folder:
            result = asyncio.run(stopped_by_sigterm(args, Path(folder)))
    log(
        f"lost {result['lost']}, duplicated {result['duplicated']}, unknown {result['unknown']},"
        f" recovered {result['all_recovered']}"
    )
    if args.logs is not None:  # beside the logs: a test's assertion message is cut short
        (args.logs / "report.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(json.dumps(result, indent=2, ensure_ascii=False))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
