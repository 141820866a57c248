"""`kindred backup` and `kindred restore` on both stores: turns, memories, a reaction, an adapter
version with its files, a training run, an app and an unsaved spill are backed up, the store and
the data folder are wiped, and the restore gives back every row and every file as they were.
A store that holds data is refused unless --force; a changed backup is refused before anything
is touched; and a SQLite backup taken while a writer keeps writing is whole."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bot.core.errors import ConfigError, InvalidInput, StoreError
from bot.core.miniapps.facts import Facts
from bot.core.miniapps.models import NewVersion
from bot.core.miniapps.specs import rule_spec
from bot.core.models import Feedback
from bot.core.store import Store
from bot.web.miniapps.render import render_app
from bot.wiring.backends import open_store
from bot.wiring.backup import backup, restore
from bot.wiring.settings import GeneralSettings, Settings, StoreSettings
from tests.store.test_contract import T0, memory, turn
from tests.store.test_registry_contract import candidate

ROOT = Path(__file__).resolve().parents[2]
Rows = dict[str, list[str]]


def on_sqlite(data: Path) -> Settings:
    """SQLite at its default place, data/kindred.db, whatever DATABASE_URL this shell has."""
    store = StoreSettings(DATABASE_URL=f"sqlite:///{data / 'kindred.db'}")
    return Settings(general=GeneralSettings(data_dir=data), store=store)


def notes_app() -> NewVersion:
    spec = rule_spec("notes", "a journal", Facts(), date.today())
    return NewVersion("notes", spec["title"], spec, render_app("notes", spec), "a journal", "k", "rules")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Where a restore goes: a function giving settings for an empty store of the test's kind."""

    async def settings(name: str) -> Settings:
        if request.param == "sqlite":
            return on_sqlite(tmp_path / name)
        from tests.support.pg import as_url, fresh_database

        url = as_url(await fresh_database(request.getfixturevalue("pg_server")))
        return Settings(
            general=GeneralSettings(data_dir=tmp_path / name), store=StoreSettings(DATABASE_URL=url)
        )

    return settings


async def populate(settings: Settings, people: int = 2) -> None:
    store = await open_store(settings)
    try:
        for n in range(people):
            await write_person(store, f"telegram:{n}")
        adapter = await store.adapters.add_adapter(candidate("v1"))
        await store.adapters.promote_adapter(adapter.version, T0)
        await store.adapters.start_run("nightly-1", T0, timedelta(hours=1))
        await store.miniapps.create_app("telegram:0", "telegram:0", "t" * 32, notes_app(), datetime.now(UTC))
    finally:
        await store.close()
    (settings.adapters_path / "v1").mkdir(parents=True)
    (settings.adapters_path / "v1" / "adapter_model.safetensors").write_bytes(os.urandom(4096))
    (settings.adapters_path / "v1" / "adapter_config.json").write_text('{"r": 8}')
    (settings.data_dir / "unsaved").mkdir(parents=True)
    (settings.data_dir / "unsaved" / "spill-1.jsonl").write_text('{"text": "not stored yet"}\n')


async def write_person(store: Store, user: str) -> None:
    said = await store.turns.add_turn(turn(user, "I sleep badly since I moved", chat=user))
    reply = await store.turns.add_turn(turn(user, "Try less coffee after noon", chat=user, role="assistant"))
    await store.turns.record_feedback(Feedback(reply.id, user, "👍", 1.0, T0))
    ids = await store.memories.add_memories(
        [memory(user, "I drink coffee at night"), memory(user, "I moved to Lyon")]
    )
    await store.curation.link_sources(ids[0], [said.id])


def rows(settings: Settings) -> Rows:
    """Every row of every table, as text, sorted: equal when the stores hold the same data."""
    if settings.store.backend == "sqlite":
        with contextlib.closing(sqlite3.connect(settings.sqlite_path)) as db:
            names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {name: sorted(map(repr, db.execute(f'SELECT * FROM "{name}"'))) for name in names}
    assert settings.store.database_url is not None
    with psycopg.connect(settings.store.database_url) as db:
        names = [r[0] for r in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return {name: sorted(map(repr, db.execute(f'SELECT * FROM "{name}"'))) for name in names}


def files(settings: Settings) -> dict[str, bytes]:
    found = {}
    for folder in (settings.adapters_path, settings.data_dir / "unsaved"):
        for file in folder.rglob("*"):
            if file.is_file():
                found[str(file.relative_to(settings.data_dir))] = file.read_bytes()
    return found


async def test_a_backup_restored_into_a_wiped_store_gives_back_every_row_and_file(
    place: Any, tmp_path: Path
) -> None:
    first = await place("first")
    await populate(first)
    before, kept = rows(first), files(first)
    assert len(before["turns"]) == 4 and len(before["apps"]) == 1 and len(before["adapters"]) == 1
    manifest = await backup(first, tmp_path / "backup")
    text = (tmp_path / "backup" / "manifest.json").read_text()
    assert json.loads(text) == manifest
    assert str(first.store.database_url) not in text and "postgresql://" not in text
    listed = {entry["path"] for entry in manifest["files"]}
    assert {"adapters/v1/adapter_model.safetensors", "unsaved/spill-1.jsonl", manifest["database"]} <= listed

    again = await place("again")  # a new, empty store and data folder: the old ones are wiped
    shutil.rmtree(first.data_dir)
    await restore(again, tmp_path / "backup")
    assert rows(again) == before
    assert files(again) == kept
    store = await open_store(again)  # and it opens, migrated, and answers as before
    try:
        hits = await store.memories.lexical_search("telegram:1", ["coffee"], 5)
        assert "I drink coffee at night" in [hit.memory.text for hit in hits]
        assert (await store.adapters.serving_adapter()) is not None
    finally:
        await store.close()


async def test_a_store_that_holds_data_is_replaced_only_with_force(place: Any, tmp_path: Path) -> None:
    settings = await place("live")
    await populate(settings, people=1)
    await backup(settings, tmp_path / "backup")
    backed_up = rows(settings)
    store = await open_store(settings)
    try:
        await write_person(store, "telegram:99")  # written after the backup
    finally:
        await store.close()
    now = rows(settings)
    with pytest.raises(InvalidInput, match=r"already holds \d+ rows of people's data.*--force"):
        await restore(settings, tmp_path / "backup")
    assert rows(settings) == now  # refused: nothing changed
    await restore(settings, tmp_path / "backup", force=True)
    assert rows(settings) == backed_up


async def test_a_changed_backup_is_refused_before_anything_changes(tmp_path: Path) -> None:
    settings = on_sqlite(tmp_path / "data")
    await populate(settings, people=1)
    await backup(settings, tmp_path / "backup")
    (tmp_path / "backup" / "adapters" / "v1" / "adapter_config.json").write_text('{"r": 64}')
    target = on_sqlite(tmp_path / "empty")
    with pytest.raises(InvalidInput, match=r"adapters/v1/adapter_config\.json is missing or changed"):
        await restore(target, tmp_path / "backup")
    assert not target.sqlite_path.exists() and not target.adapters_path.exists()
    with pytest.raises(InvalidInput, match="not an empty folder"):
        await backup(settings, tmp_path / "backup")  # a backup never writes over another


async def test_a_sqlite_backup_taken_while_a_writer_writes_is_whole(tmp_path: Path) -> None:
    settings = on_sqlite(tmp_path / "data")
    await populate(settings, people=1)
    store = await open_store(settings)
    writing = True

    async def writer() -> int:
        n = 0
        while writing:
            await store.turns.add_turn(turn("telegram:7", f"line {n}", chat="telegram:7"))
            n += 1
        return n

    task = asyncio.create_task(writer())
    try:
        await asyncio.sleep(0.2)
        await backup(settings, tmp_path / "backup")
        writing = False
        written = await task
    finally:
        await store.close()
    copy = tmp_path / "backup" / "kindred.db"
    with contextlib.closing(sqlite3.connect(copy)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        lines = [r[0] for r in db.execute("SELECT text FROM turns WHERE user_id = 'telegram:7' ORDER BY id")]
    assert 0 < len(lines) <= written
    assert lines == [f"line {n}" for n in range(len(lines))]  # a moment's snapshot: a prefix, no gap


@pytest.mark.procs
def test_the_commands_say_what_they_did_and_why_they_refuse(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KINDRED_", "DATABASE_URL"))}
    env.update(KINDRED_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(ROOT))
    asyncio.run(populate(on_sqlite(tmp_path / "data"), people=1))

    def kindred(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot.cli", *args], env=env, capture_output=True,
                              text=True, timeout=120, cwd=tmp_path)  # fmt: skip

    made = kindred("backup", str(tmp_path / "backup"))
    assert made.returncode == 0, made.stderr
    assert "backed up the sqlite store" in made.stdout
    refused = kindred("restore", str(tmp_path / "backup"))
    assert refused.returncode == 1 and "--force" in refused.stderr and "Traceback" not in refused.stderr
    forced = kindred("restore", "--force", str(tmp_path / "backup"))
    assert forced.returncode == 0, forced.stderr
    assert "restored the sqlite store" in forced.stdout
    nothing = kindred("restore", str(tmp_path / "nowhere"))
    assert nothing.returncode == 1 and "is not a Kindred backup" in nothing.stderr


@pytest.mark.pg
async def test_a_tool_older_than_the_server_or_a_backup_of_the_other_store_is_refused_clearly(
    pg_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.store import backup as dumps
    from tests.support.pg import as_url, fresh_database

    url = as_url(await fresh_database(pg_server))
    settings = Settings(
        general=GeneralSettings(data_dir=tmp_path / "pg"), store=StoreSettings(DATABASE_URL=url)
    )
    await populate(settings, people=1)
    system = shutil.which("pg_dump")
    if system is not None and dumps.pg_tool_candidates("pg_dump")[0] != Path(system):
        # Only the system's client (PostgreSQL 15 here), older than the embedded server (18).
        monkeypatch.setattr(dumps, "pg_tool_candidates", lambda name: [Path(system)])
        with pytest.raises(StoreError, match=r"pg_dump 18 or newer is needed .* found: /usr/bin/pg_dump"):
            await backup(settings, tmp_path / "too-old")
        monkeypatch.undo()
    sqlite = on_sqlite(tmp_path / "lite")
    await populate(sqlite, people=1)
    await backup(sqlite, tmp_path / "lite-backup")
    with pytest.raises(
        ConfigError, match="the backup holds a sqlite store, and DATABASE_URL points at postgres"
    ):
        await restore(settings, tmp_path / "lite-backup")
