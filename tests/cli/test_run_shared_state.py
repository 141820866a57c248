"""`kindred run` as a replica is started: webhook mode, its state shared in Redis
(KINDRED_SHARED_STATE_URL), the real embedder and a tiny model. The post is answered once the
reply is out, the update is recorded in Redis as handled, /healthz says where the state lives, and
a copy of the post is answered without a second reply."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path

import aiohttp
from redis.asyncio import Redis

from bot.adapters.telegram.secret import derived_webhook_secret
from tests.adapters.telegram.conftest import ANN, replies_done
from tests.cli.test_run import START_S, run_env
from tests.jobs.workerproc import redis_url
from tests.support.replica_procs import WEBHOOK_PATH
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.webhook_push import WebhookPusher


async def serving_port(stderr: asyncio.StreamReader, log: list[str]) -> int:
    while line := (await asyncio.wait_for(stderr.readline(), START_S)).decode():
        log.append(line)
        if found := re.search(r"serving telegram on port (\d+)", line):
            return int(found[1])
    raise AssertionError("".join(log)[-3000:])


async def test_kindred_run_in_webhook_mode_keeps_its_intake_in_redis(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    async with FakeTelegramBotApi() as api:
        env = run_env(api, shared_data, f"sqlite:///{tmp_path / 'kindred.db'}", tiny_model)
        env.update(
            TELEGRAM_WEBHOOK_URL=f"https://bot.example.org{WEBHOOK_PATH}",
            KINDRED_SHARED_STATE_URL=redis_url(),
            KINDRED_LOG_LEVEL="INFO",
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run", env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert process.stderr is not None
        log: list[str] = []
        redis = Redis.from_url(redis_url())
        bot, keys = api.token.split(":")[0], []
        try:
            port = await serving_port(process.stderr, log)
            update = api.private_message(ANN, "hello by webhook")
            keys = [f"kindred:shared:intake:{kind}:telegram:{bot}:{ANN}" for kind in ("c", "h")]
            key = f"kindred:shared:intake:u:telegram:{bot}:{update['update_id']}"
            keys.append(key)
            url = f"http://127.0.0.1:{port}{WEBHOOK_PATH}"
            async with WebhookPusher(url, derived_webhook_secret(api.token)) as telegram:
                assert (await telegram.deliver(update)).statuses == [200]
                await replies_done(api, ANN, 1, wait_s=60)
                assert await redis.hget(key, "state") == b"done"
                assert await telegram.post_once(update) == 200  # Telegram's retry: no second reply
            async with (
                aiohttp.ClientSession() as http,
                http.get(f"http://127.0.0.1:{port}/healthz") as answer,
            ):
                assert (await answer.json())["shared_state"] == "redis"
        finally:
            process.send_signal(signal.SIGTERM)
            log.append((await asyncio.wait_for(process.stderr.read(), 60)).decode())
            await process.wait()
            if keys:
                await redis.delete(*keys)
            await redis.aclose()
    assert process.returncode == 0, "".join(log)[-3000:]
    assert len(api.texts(ANN)) == 1
    assert api.token not in "".join(log)
