"""The `store` fixture here is `any_store`: every contract test runs once on SQLite and once on
Postgres + pgvector."""

from __future__ import annotations

import pytest

from bot.core.store import Store


@pytest.fixture
def store(any_store: Store) -> Store:
    return any_store
