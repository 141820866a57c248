"""Beat: one schedule from the settings, and the guard that keeps a second beat from starting."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis

from bot.core.errors import ConfigError
from bot.jobs.beat_lock import BEAT_LOCK_KEY, BeatLock
from bot.wiring.schedule import schedule_entries
from bot.wiring.settings import WorkerSettings
from bot.wiring.settings.training import TrainingSettings
from tests.jobs.workerproc import ROOT, TEST_REDIS_DB, RedisServer, flush, redis_url
from workers.schedule import beat_schedule as celery_schedule

pytestmark = pytest.mark.procs

BEAT_DB = TEST_REDIS_DB + 2


@pytest.fixture
def beat_redis() -> Iterator[str]:
    url = redis_url(BEAT_DB)
    flush(url)
    yield url
    flush(url)


def settings(**values: str) -> WorkerSettings:
    return WorkerSettings(**values)  # type: ignore[arg-type]


def beat_schedule(workers: WorkerSettings, training: TrainingSettings | None = None) -> dict[str, Any]:
    """Beat's schedule as `workers/app.py` builds it, from the two sections that time its entries."""
    return celery_schedule(schedule_entries(workers, training or TrainingSettings(enabled=True)))


def test_the_schedule_runs_store_upkeep_at_the_configured_time() -> None:
    entry = beat_schedule(settings(upkeep_cron="5 3 * * 1"))["store-upkeep"]
    assert entry["task"] == "kindred.store.upkeep"
    assert entry["options"] == {"queue": "default"}
    schedule = entry["schedule"]
    assert (schedule.minute, schedule.hour, schedule.day_of_week) == ({5}, {3}, {1})


def test_the_schedule_runs_memory_upkeep_at_its_own_time() -> None:
    entry = beat_schedule(settings(memory_upkeep_cron="30 2 * * *"))["memory-upkeep"]
    assert entry["task"] == "kindred.memory.upkeep" and entry["options"] == {"queue": "default"}
    assert (entry["schedule"].minute, entry["schedule"].hour) == ({30}, {2})
    with pytest.raises(ConfigError, match="KINDRED_MEMORY_UPKEEP_CRON"):
        beat_schedule(settings(memory_upkeep_cron="nightly"))


def test_the_schedule_trains_nightly_on_the_train_queue_unless_training_is_off() -> None:
    entry = beat_schedule(settings(), TrainingSettings(cron="45 1 * * *"))["training-nightly"]
    assert entry["task"] == "kindred.training.nightly" and entry["options"] == {"queue": "train"}
    assert (entry["schedule"].minute, entry["schedule"].hour) == ({45}, {1})
    assert "training-nightly" not in beat_schedule(settings(), TrainingSettings(enabled=False))
    with pytest.raises(ConfigError, match="KINDRED_TRAIN_CRON"):
        beat_schedule(settings(), TrainingSettings(cron="3am"))


@pytest.mark.parametrize("bad", ["5 3 * *", "61 3 * * *", "every night"])
def test_a_bad_crontab_names_its_setting(bad: str) -> None:
    with pytest.raises(ConfigError, match="KINDRED_UPKEEP_CRON"):
        beat_schedule(settings(upkeep_cron=bad))


def test_the_lock_is_held_by_one_and_only_its_holder_renews_or_frees_it(beat_redis: str) -> None:
    client = redis.Redis.from_url(beat_redis)
    first, second = BeatLock(client, 30), BeatLock(client, 30)
    try:
        assert first.acquire()
        assert not second.acquire()
        assert second.holder() == first.token
        assert not second.renew()
        second.release()  # not the holder: nothing happens
        assert client.get(BEAT_LOCK_KEY) == first.token.encode()
        assert first.renew() and 25 < client.ttl(BEAT_LOCK_KEY) <= 30
        first.release()
        assert second.acquire()  # free again
    finally:
        client.close()


def start_beat(url: str, data_dir: Path, log: Path, **more: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KINDRED_")}
    env.update(
        **more,
        REDIS_URL=url,
        KINDRED_DATA_DIR=str(data_dir),
        DATABASE_URL=f"sqlite:///{data_dir / 'kindred.db'}",
        KINDRED_LOG_LEVEL="INFO",
        PYTHONPATH=str(ROOT),
    )
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "beat"], cwd=ROOT, env=env, text=True,
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip


def test_a_second_beat_refuses_to_start_while_the_first_runs(beat_redis: str, tmp_path: Path) -> None:
    client = redis.Redis.from_url(beat_redis)
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = start_beat(beat_redis, tmp_path, first_log)
    try:
        deadline = time.monotonic() + 30
        while "beat: Starting" not in first_log.read_text() and first.poll() is None:
            assert time.monotonic() < deadline, "beat did not start"
            time.sleep(0.1)
        assert first.poll() is None, first_log.read_text()
        holder = client.get(BEAT_LOCK_KEY)
        assert holder is not None

        second = start_beat(beat_redis, tmp_path, second_log)
        assert second.wait(timeout=30) == 1
        output = second_log.read_text()
        assert "another beat is running" in output and holder.decode() in output

        first.send_signal(signal.SIGTERM)
        first.wait(timeout=30)
        assert client.get(BEAT_LOCK_KEY) is None  # freed at once, not after the TTL
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        client.close()


def wait_for_start(log: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while "beat: Starting" not in log.read_text() and process.poll() is None:
        assert time.monotonic() < deadline, "beat did not start"
        time.sleep(0.1)
    assert process.poll() is None, log.read_text()


def test_a_beat_that_cannot_renew_its_lock_stops_and_takes_celery_beat_with_it(tmp_path: Path) -> None:
    """Redis gone at a renewal: `kindred beat` used to die of the error and leave its celery beat
    running, orphaned; once a new `kindred beat` started, every entry was sent twice (bench/soak.py
    saw two a minute). Now it stops its child and exits, for its supervisor to start it again."""
    server = RedisServer(tmp_path / "redis").start()
    log = tmp_path / "beat.log"
    beat = start_beat(server.url, tmp_path, log, KINDRED_BEAT_LOCK_TTL_S="6")
    try:
        wait_for_start(log, beat)
        [celery_beat] = psutil.Process(beat.pid).children()
        server.stop()
        assert beat.wait(timeout=30) == 1, log.read_text()
        assert "cannot renew its lock (Redis unreachable)" in log.read_text()
        assert not celery_beat.is_running() or celery_beat.status() == psutil.STATUS_ZOMBIE
    finally:
        if beat.poll() is None:
            beat.kill()
            beat.wait()
        server.stop()


def test_the_schedule_runs_the_proactive_beat_every_few_minutes() -> None:
    entry = beat_schedule(settings())["proactive-beat"]
    assert entry["task"] == "kindred.proactive.beat" and entry["options"] == {"queue": "default"}
    assert entry["schedule"].minute == set(range(0, 60, 5))
    with pytest.raises(ConfigError, match="KINDRED_PROACTIVE_CRON"):
        beat_schedule(settings(proactive_cron="often"))
