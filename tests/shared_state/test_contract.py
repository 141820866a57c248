"""One contract for the state replicas share, run on both implementations: in this process (the
core's) and in a real Redis (bot/shared_state, on this session's database). What only several
replicas can show (a replica that dies holding tickets, Redis going away) follows, on Redis."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from redis.asyncio import Redis

from bot.core.chat.ports import Buckets, Intake
from bot.core.chat.ratelimit import RateLimiter
from bot.core.errors import SharedStateUnavailable
from bot.core.models import Admission
from bot.shared_state.connection import connect
from bot.shared_state.local_buckets import LocalBuckets
from bot.shared_state.local_intake import LocalIntake
from bot.shared_state.redis_buckets import RedisBuckets
from bot.shared_state.redis_intake import RedisIntake
from tests.jobs.workerproc import redis_url
from tests.support.redis_server import redis_host
from tests.support.tcp_link import CuttableLink

# A replica: its own intake and buckets (in Redis: its own client) on the state all replicas share.
Replica = tuple[Intake, Buckets]
NewReplica = Callable[[], Awaitable[Replica]]
LEASE_S = 0.6


@pytest.fixture(params=["in-process", "redis"])
async def replica(request: pytest.FixtureRequest) -> AsyncIterator[NewReplica]:
    """Each call is another replica. In one process there is only one, so every call is it."""
    closing: list[Callable[[], Awaitable[None]]] = []
    namespace = uuid.uuid4().hex
    if request.param == "in-process":
        single: Replica = (LocalIntake(), LocalBuckets())

        async def in_process() -> Replica:
            return single

        yield in_process
    else:

        async def in_redis() -> Replica:
            client = connect(redis_url())
            intake = RedisIntake(client, lease_s=LEASE_S, namespace=f"{namespace}:intake")
            closing.extend([intake.close, client.aclose])
            return intake, RedisBuckets(client, namespace=f"{namespace}:buckets")

        yield in_redis
        cleaner = Redis.from_url(redis_url())
        async for key in cleaner.scan_iter(f"kindred:shared:{namespace}:*"):
            await cleaner.delete(key)
        await cleaner.aclose()
    for close in reversed(closing):
        await close()


async def test_each_chat_numbers_its_updates_from_one(replica: NewReplica) -> None:
    (intake, _), (other, _) = await replica(), await replica()
    first = await intake.admit("u1", "chat-a")
    assert first == Admission("handle", "u1", "chat-a", 1)
    assert (await other.admit("u2", "chat-a")).ticket == 2, "replicas share one count per chat"
    assert (await intake.admit("u3", "chat-b")).ticket == 1
    assert await other.admit("u4", None) == Admission("handle", "u4", None, 0)


async def test_a_finished_update_is_a_duplicate_and_a_held_one_is_busy(replica: NewReplica) -> None:
    (intake, _), (other, _) = await replica(), await replica()
    taken = await intake.admit("u1", "chat")
    assert (await other.admit("u1", "chat")).verdict == "busy"
    await intake.finish(taken)
    assert (await other.admit("u1", "chat")).verdict == "duplicate"
    assert (await intake.admit("u1", "chat")).verdict == "duplicate"
    assert (await intake.admit("u2", "chat")).ticket == 2, "a copy takes no ticket"


async def test_a_released_update_is_handed_out_again_and_holds_up_nobody(replica: NewReplica) -> None:
    (stopping, _), (other, _) = await replica(), await replica()
    given_back = await stopping.admit("u1", "chat")
    following = await other.admit("u2", "chat")
    await stopping.release(given_back)
    await asyncio.wait_for(other.wait_turn(following), 1.0)  # nobody holds the ticket before it
    await other.finish(following)
    again = await other.admit("u1", "chat")
    assert again.verdict == "handle", "its copy is handled at once, not refused as busy"
    await asyncio.wait_for(other.wait_turn(again), 1.0)
    await other.finish(again)
    assert (await stopping.admit("u1", "chat")).verdict == "duplicate"


async def test_a_chats_updates_take_their_turns_in_ticket_order(replica: NewReplica) -> None:
    replicas = [(await replica())[0] for _ in range(3)]
    admitted = [await replicas[n % 3].admit(f"u{n}", "chat") for n in range(6)]
    handled: list[int] = []

    async def handle(intake: Intake, admission: Admission) -> None:
        await intake.wait_turn(admission)
        handled.append(admission.ticket)
        await asyncio.sleep(0.01)  # the reply takes a while; the next one must wait for it
        handled.append(-admission.ticket)
        await intake.finish(admission)

    # Started last first: each must still wait for the one before it.
    await asyncio.gather(*(handle(replicas[n % 3], admitted[n]) for n in reversed(range(6))))
    assert handled == [n for ticket in range(1, 7) for n in (ticket, -ticket)]


async def test_chats_do_not_wait_for_each_other(replica: NewReplica) -> None:
    intake, _ = await replica()
    slow = await intake.admit("u1", "slow chat")
    await intake.wait_turn(slow)
    blocked = await intake.admit("u2", "slow chat")
    other = await intake.admit("u3", "other chat")
    await asyncio.wait_for(intake.wait_turn(other), 1.0)
    waiting = asyncio.create_task(intake.wait_turn(blocked))
    await asyncio.sleep(0.1)
    assert not waiting.done(), "the slow chat's second update waits for its first"
    await intake.finish(slow)
    await asyncio.wait_for(waiting, 1.0)


async def test_a_bucket_allows_its_burst_then_says_how_long_to_wait(replica: NewReplica) -> None:
    (_, buckets), (_, other) = await replica(), await replica()
    assert [await buckets.take("ann", 0.1, 3) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert await other.take("ann", 0.1, 3) == pytest.approx(10.0, abs=0.1), "one bucket for both"
    assert await buckets.take("bob", 0.1, 3) == 0.0, "each key has its own"


async def test_a_bucket_fills_again_at_its_rate(replica: NewReplica) -> None:
    _, buckets = await replica()
    assert await buckets.take("fast", 20.0, 1) == 0.0
    assert 0.0 < await buckets.take("fast", 20.0, 1) <= 0.05
    await asyncio.sleep(0.06)
    assert await buckets.take("fast", 20.0, 1) == 0.0


async def test_a_person_writing_through_two_replicas_is_limited_as_one(replica: NewReplica) -> None:
    (_, mine), (_, theirs) = await replica(), await replica()
    limiters = [RateLimiter(per_minute=6, burst=4, buckets=buckets) for buckets in (mine, theirs)]
    waits = [await limiters[n % 2].take("telegram:1") for n in range(6)]
    assert waits[:4] == [0.0] * 4 and all(wait > 9 for wait in waits[4:])
    assert await RateLimiter(per_minute=0, burst=1, buckets=mine).take("telegram:1") == 0.0, "0: off"


# -- only several replicas can show these: Redis ---------------------------------------------------


@pytest.fixture
async def redis_replica() -> AsyncIterator[Callable[[str], Awaitable[RedisIntake]]]:
    namespace, clients = uuid.uuid4().hex, []

    async def open_one(url: str = redis_url()) -> RedisIntake:
        client = connect(url)
        clients.append(client)
        return RedisIntake(client, lease_s=LEASE_S, namespace=namespace)

    yield open_one
    for client in clients:
        await client.aclose()
    cleaner = Redis.from_url(redis_url())
    async for key in cleaner.scan_iter(f"kindred:shared:{namespace}:*"):
        await cleaner.delete(key)
    await cleaner.aclose()


async def test_a_dead_replicas_tickets_stall_their_chat_for_at_most_the_lease(
    redis_replica: Callable[[], Awaitable[RedisIntake]], caplog: pytest.LogCaptureFixture
) -> None:
    dying, alive = await redis_replica(), await redis_replica()
    lost = await dying.admit("u1", "chat")
    await dying.close()  # killed: it stops renewing, and never finishes
    mine = await alive.admit("u2", "chat")
    assert (await alive.admit("u1", "chat")).verdict == "busy", "its hold has not run out yet"
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        await asyncio.wait_for(alive.wait_turn(mine), 5 * LEASE_S)
    assert LEASE_S * 0.5 < time.monotonic() - started < LEASE_S * 3
    assert "went on past tickets below 2 that no live replica holds" in caplog.text
    await alive.finish(mine)
    # The platform delivers the dead one's update again: it is handled, with its own ticket.
    again = await alive.admit("u1", "chat")
    assert again == Admission("handle", "u1", "chat", lost.ticket)
    await asyncio.wait_for(alive.wait_turn(again), 1.0)
    await alive.finish(again)
    assert (await alive.admit("u1", "chat")).verdict == "duplicate"


async def test_a_live_replica_keeps_its_hold_past_the_lease(
    redis_replica: Callable[[], Awaitable[RedisIntake]],
) -> None:
    slow, other = await redis_replica(), await redis_replica()
    long_reply = await slow.admit("u1", "chat")
    await slow.wait_turn(long_reply)
    following = await other.admit("u2", "chat")
    waiting = asyncio.create_task(other.wait_turn(following))
    await asyncio.sleep(LEASE_S * 3)
    assert not waiting.done(), "the heartbeat keeps the chat's order while a long reply runs"
    assert (await other.admit("u1", "chat")).verdict == "busy"
    await slow.finish(long_reply)
    await asyncio.wait_for(waiting, 1.0)
    await slow.close()


async def test_after_redis_lost_its_data_a_chat_counts_anew_and_keeps_its_order(
    redis_replica: Callable[[], Awaitable[RedisIntake]],
) -> None:
    intake, chat = await redis_replica(), f"chat-{uuid.uuid4().hex}"
    old = [await intake.admit(f"old{n}", chat) for n in range(5)]
    for admission in old[:4]:
        await intake.wait_turn(admission)
        await intake.finish(admission)
    await intake.wait_turn(old[4])
    cleaner = Redis.from_url(redis_url())
    await cleaner.delete(*[key async for key in cleaner.scan_iter(f"kindred:shared:*:[ch]:{chat}")])
    await cleaner.aclose()
    first, second = await intake.admit("new1", chat), await intake.admit("new2", chat)
    assert (first.ticket, second.ticket) == (1, 2)
    await intake.finish(old[4])  # ticket 5 of the old count: it must not let ticket 2 jump ahead
    await asyncio.wait_for(intake.wait_turn(first), 1.0)
    waiting = asyncio.create_task(intake.wait_turn(second))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await intake.finish(first)
    await asyncio.wait_for(waiting, 1.0)


async def test_while_redis_is_away_admit_refuses_and_the_limits_go_on_per_replica(
    redis_replica: Callable[[str], Awaitable[RedisIntake]], caplog: pytest.LogCaptureFixture
) -> None:
    host, port = redis_host().split(":")
    async with CuttableLink(host, int(port)) as link:
        db = redis_url().rsplit("/", 1)[1]
        url = f"redis://127.0.0.1:{link.port}/{db}"
        intake = await redis_replica(url)
        buckets = RedisBuckets(connect(url), namespace=f"{uuid.uuid4().hex}:buckets")
        first = await intake.admit("u1", "chat")
        await link.cut()
        with pytest.raises(SharedStateUnavailable):
            await intake.admit("u2", "chat")  # the webhook answers 503: the platform sends it again
        with caplog.at_level(logging.WARNING):
            assert [await buckets.take("ann", 0.1, 2) for _ in range(3)][2] > 0, "still limited"
        assert "limits are this replica's own" in caplog.text
        finishing = asyncio.create_task(intake.finish(first))
        await asyncio.sleep(0.3)
        await link.restore()
        await asyncio.wait_for(finishing, 5.0)  # waited for Redis, then marked
        again = await intake.admit("u2", "chat")
        assert again.verdict == "handle" and again.ticket == 2
        assert (await intake.admit("u1", "chat")).verdict == "duplicate"
        await intake.close()


async def test_a_burst_past_the_pool_waits_for_a_connection_instead_of_reading_as_an_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Three hundred takes at once through one client: each waits for one of its connections, none
    is read as "Redis unreachable" (redis-py's default pool refused the 101st at once)."""
    client = connect(redis_url())
    buckets = RedisBuckets(client, namespace=f"{uuid.uuid4().hex}:buckets")
    try:
        with caplog.at_level(logging.WARNING):
            waits = await asyncio.gather(*(buckets.take(f"p{i}", 1.0, 5.0) for i in range(300)))
        assert waits == [0.0] * 300
        assert "unreachable" not in caplog.text
    finally:
        await client.aclose()
