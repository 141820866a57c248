"""Two bot replicas, each a real python-telegram-bot Application in webhook mode in a process of its
own, behind one round-robin address, sharing their state in a real Redis and one store: Telegram
(the loopback fake, and a pusher that posts until it gets a 2xx) sends many chats' messages at once.
Every message gets exactly one reply, each chat's in the order of its messages; a copy of an update
posted to the other replica is handled once; a person flooding through both is limited as one; a
replica killed mid-reply is replaced by the other, and the update is still answered once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from bot.adapters.telegram.secret import derived_webhook_secret
from tests.support.replica_fixtures import StartReplica, person, stored_turns
from tests.support.replica_procs import WEBHOOK_PATH as HOOK
from tests.support.round_robin import RoundRobinFront
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.webhook_push import WebhookPusher

CHATS, MESSAGES = 30, 5
FLOOD = 14
# Everyone's burst covers their MESSAGES; the flooder's does not, and barely refills meanwhile.
BURST, PER_MINUTE = 5, 1
SLOW_DOWN = "You're writing faster"
# A webhook post is answered after this long at most, before its reply (REPLY_DELAY_S) is done.
ANSWER_S = 0.05


def settings(*, reply_delay_s: float = 0.2, lease_s: float = 30.0, answer_s: float = 8.0) -> dict[str, str]:
    return {
        "KINDRED_SHARED_LEASE_S": str(lease_s),
        "KINDRED_TELEGRAM_WEBHOOK_ANSWER_S": str(answer_s),
        "KINDRED_USER_MESSAGES_PER_MINUTE": str(PER_MINUTE),
        "KINDRED_USER_MESSAGE_BURST": str(BURST),
        "REPLICA_REPLY_DELAY_S": str(reply_delay_s),
    }


async def test_two_replicas_answer_every_message_once_in_order_and_limit_a_person_as_one(
    replica_api: FakeTelegramBotApi, start_replica: StartReplica, tmp_path: Path
) -> None:
    api = replica_api
    replicas = [await start_replica(**settings(answer_s=ANSWER_S)) for _ in range(2)]
    idle_mb = [replica.rss_mb() for replica in replicas]
    cpu_before = [replica.cpu_s() for replica in replicas]
    people = [person(api, n) for n in range(CHATS)]
    flooder, copied = person(api, 900), person(api, 901)
    async with (
        RoundRobinFront([r.port for r in replicas]) as front,
        WebhookPusher(f"http://127.0.0.1:{front.port}{HOOK}", derived_webhook_secret(api.token)) as telegram,
    ):

        async def chat(chat_id: int, texts: list[str]) -> None:
            # As Telegram does, a chat's next update is posted once the last one was answered; the
            # answer comes before the reply is done (ANSWER_S), so the next update arrives, at the
            # other replica as often as not, while the last is still being handled.
            for text in texts:
                await telegram.deliver(api.private_message(chat_id, text))

        started = time.monotonic()
        await asyncio.gather(
            *(chat(chat_id, [f"{chat_id} says {n}" for n in range(MESSAGES)]) for chat_id in people),
            chat(flooder, [f"flood {n}" for n in range(FLOOD)]),
        )
        elapsed = time.monotonic() - started
        total = CHATS * MESSAGES + FLOOD
        await api.wait_until(
            lambda: sum(len(api.texts(chat)) for chat in [*people, flooder]) >= total, 60, what="every reply"
        )
        # Telegram posts one again, and it lands on the other replica: taken, not answered again
        # (429 while the first replica is still on it, then 200 for a copy of a finished one).
        again = api.private_message(copied, "asked twice")
        assert (await telegram.post_once(again, f"http://127.0.0.1:{replicas[0].port}{HOOK}")) == 200
        copy = await telegram.deliver(again, f"http://127.0.0.1:{replicas[1].port}{HOOK}")
        assert copy.statuses[-1] == 200 and set(copy.statuses) <= {200, 429}, copy.statuses
        await api.wait_until(lambda: api.texts(copied), 10, what="the copy's reply")
        await asyncio.sleep(0.5)  # time for a second answer, which must not come
        assert min(front.forwarded.values()) > total // 3, f"both replicas took posts: {front.forwarded}"
    cpu_used = sum(replica.cpu_s() for replica in replicas) - sum(cpu_before)
    busy_mb = [replica.rss_mb() for replica in replicas]

    for chat_id in people:
        sent = [f"{chat_id} says {n}" for n in range(MESSAGES)]
        replies = api.texts(chat_id)
        assert replies == [f"re: {text}" for text in sent], f"chat {chat_id}: one reply each, in order"
        turns = stored_turns(tmp_path, chat_id)
        assert turns == [turn for text in sent for turn in (("user", text), ("assistant", f"re: {text}"))]
    assert api.texts(copied) == ["re: asked twice"]
    flood_replies = api.texts(flooder)
    answered = [text for text in flood_replies if not text.startswith(SLOW_DOWN)]
    assert len(flood_replies) == FLOOD, "every message of the flood is answered, most by a 'slow down'"
    # Shared: one allowance of BURST (and one more if a minute passed); each replica's own would
    # have let about twice as many through.
    assert BURST <= len(answered) <= BURST + 1, answered
    for replica in replicas:
        assert await replica.stop() == 0
    print(
        f"\nreplica cost: idle RSS {idle_mb[0]:.0f}/{idle_mb[1]:.0f} MB, after {total} messages "
        f"{busy_mb[0]:.0f}/{busy_mb[1]:.0f} MB; CPU {1000 * cpu_used / total:.1f} ms per message "
        f"(both replicas); {total / elapsed:.0f} msg/s offered over {elapsed:.1f} s"
    )


async def test_a_replica_killed_mid_reply_leaves_the_update_to_the_other_which_answers_it_once(
    replica_api: FakeTelegramBotApi, start_replica: StartReplica, tmp_path: Path
) -> None:
    api = replica_api
    doomed, survivor = [await start_replica(**settings(reply_delay_s=1.5, lease_s=2.0)) for _ in range(2)]
    someone = person(api, 1)
    async with (
        RoundRobinFront([doomed.port, survivor.port]) as front,
        WebhookPusher(
            f"http://127.0.0.1:{front.port}{HOOK}", derived_webhook_secret(api.token), retry_s=0.3
        ) as telegram,
    ):
        update = api.private_message(someone, "are you there?")
        delivery = asyncio.create_task(telegram.deliver(update))  # the front sends the first to `doomed`
        await api.wait_until(lambda: stored_turns(tmp_path, someone), 10, what="the turn stored")
        doomed.kill()  # mid-reply: its post is never answered
        taken = await asyncio.wait_for(delivery, 30)
        assert taken.statuses[0] == 502 and taken.statuses[-1] == 200, taken.statuses  # the front: 502
        assert 429 in taken.statuses, "the other replica waited out the dead one's hold first"
        await api.wait_until(lambda: api.texts(someone), 10, what="the reply")
        await asyncio.sleep(0.5)
        assert api.texts(someone) == ["re: are you there?"], "answered once, by the survivor"
        assert [role for role, _ in stored_turns(tmp_path, someone)] == ["user", "assistant"]

        # A graceful stop finishes what it accepted, and refuses what comes after with a 503.
        later = api.private_message(someone, "still there?")
        accepted = asyncio.create_task(telegram.post_once(later, f"http://127.0.0.1:{survivor.port}{HOOK}"))
        await asyncio.sleep(0.5)
        survivor.terminate()
        await asyncio.sleep(0.3)
        refused = await telegram.post_once(
            api.private_message(someone, "hello?"), f"http://127.0.0.1:{survivor.port}{HOOK}"
        )
        assert refused in (503, 0), refused  # 503 while it finishes; 0 once it has closed its port
        assert await accepted == 200
        assert await survivor.stop() == 0
        assert api.texts(someone) == ["re: are you there?", "re: still there?"]
        assert front.forwarded[survivor.port] >= 1
