"""docker-compose.yml's `front` for real: nginx with the configuration that service writes, in front
of two bot replica processes (tests/support/replica.py) sharing Redis, while Telegram (the loopback
fake and a pusher that posts until it gets a 2xx, each chat's next message once the last is
answered) sends 20 chats' messages. One replica is stopped mid-load, gracefully or killed: every
message is still answered exactly once (a kill may repeat
the reply it was sending that instant), each chat in order, and nginx never gives up on a post
because of what a replica answered."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.adapters.telegram.secret import derived_webhook_secret
from tests.support.nginx_front import NginxFront
from tests.support.replica_fixtures import StartReplica, person, stored_turns
from tests.support.replica_procs import WEBHOOK_PATH
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.webhook_push import WebhookPusher

CHATS, MESSAGES = 20, 6


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGKILL"])
async def test_a_replica_stopping_mid_load_behind_front_loses_and_repeats_nothing(
    replica_api: FakeTelegramBotApi, start_replica: StartReplica, tmp_path: Path, stop: str
) -> None:
    api = replica_api
    settings = {
        "REPLICA_REPLY_DELAY_S": "0.2",
        "KINDRED_SHARED_LEASE_S": "2",
        "KINDRED_USER_MESSAGES_PER_MINUTE": "0",
    }
    replicas = [await start_replica(**settings) for _ in range(2)]
    (tmp_path / "nginx").mkdir()
    statuses: list[int] = []
    people = [person(api, n) for n in range(CHATS)]
    async with (
        NginxFront([r.port for r in replicas], tmp_path / "nginx") as front,
        WebhookPusher(
            f"http://127.0.0.1:{front.port}{WEBHOOK_PATH}", derived_webhook_secret(api.token)
        ) as telegram,
    ):

        async def chat(chat_id: int) -> None:
            for n in range(MESSAGES):
                statuses.extend(
                    (await telegram.deliver(api.private_message(chat_id, f"{chat_id}: {n}"))).statuses
                )

        load = asyncio.gather(*(chat(chat_id) for chat_id in people))
        await api.wait_until(
            lambda: sum(len(api.texts(p)) for p in people) >= CHATS, 30, what="a first reply each"
        )
        if stop == "SIGTERM":
            replicas[0].terminate()
        else:
            replicas[0].kill()
        await asyncio.wait_for(load, 120)
        await api.wait_until(lambda: sum(len(api.texts(p)) for p in people) >= CHATS * MESSAGES, 30)
        await asyncio.sleep(0.5)  # time for a second answer to anything, which must not come
    repeated: dict[int, int] = {}
    for chat_id in people:
        sent = [f"{chat_id}: {n}" for n in range(MESSAGES)]
        texts = api.texts(chat_id)
        # A reply sent just before its replica was killed, before the update was marked finished
        # (its links were still being stored), is sent again by the replica that takes the update
        # over: at least once, at that boundary. The store keeps it once. Nothing is lost, and
        # nothing is out of order.
        shown = [text for n, text in enumerate(texts) if n == 0 or text != texts[n - 1]]
        repeated[chat_id] = len(texts) - len(shown)
        assert shown == [f"re: {text}" for text in sent], chat_id
        turns = [t for text in sent for t in (("user", text), ("assistant", f"re: {text}"))]
        assert stored_turns(tmp_path, chat_id) == turns
    if stop == "SIGTERM":
        # What it had taken it finished; new posts it refused with 503, which nginx took elsewhere.
        assert set(statuses) == {200} and not any(repeated.values()), (sorted(set(statuses)), repeated)
        assert await replicas[0].stop() == 0
    else:
        # Its unanswered posts came back, and the other replica said "in hand elsewhere" (429,
        # passed back by nginx) until the dead one's hold ran out, then took them.
        assert set(statuses) <= {200, 429, 502}, sorted(set(statuses))
        # Each chat had one update at most in the killed replica's hands.
        assert max(repeated.values()) <= 1, repeated
    assert await replicas[1].stop() == 0
