"""`/privacy training on|off` in `kindred chat`, as a person types it in a pipe, with the admin's
default (KINDRED_TRAIN_DEFAULT) shown for someone who never set it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.core.memory.controls import TRAINING_OFF, training_setting
from bot.store.sqlite.store import SqliteStore
from tests.cli.test_chat_cli import chat_env, kindred


async def consent(db: Path, user: str) -> bool | None:
    store = await SqliteStore.open(db)
    try:
        return await store.learning.training_consent(user)
    finally:
        await store.close()


def test_the_switch_in_a_pipe_and_the_admins_default(
    tmp_path: Path, shared_data: Path, tiny_model: Path
) -> None:
    env = {**chat_env(tmp_path, shared_data, str(tiny_model)), "KINDRED_TRAIN_DEFAULT": "off"}
    done = kindred(["chat", "--user", "ann"], b"/privacy\n/privacy training off\n", env)
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode()
    assert training_setting(None, False) in out and TRAINING_OFF in out
    assert asyncio.run(consent(tmp_path / "kindred.db", "ann")) is False
    assert asyncio.run(consent(tmp_path / "kindred.db", "bob")) is None
