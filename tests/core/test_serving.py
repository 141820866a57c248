"""Promote and roll back ([learning]), on both stores: the one serving version moves as an admin
expects, walking back version by version to the base model, with plain words for mistakes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.errors import InvalidInput
from bot.core.learning.models import GLOBAL_SCOPE, NewAdapter
from bot.core.learning.serving import promote, rollback
from bot.core.store import Store

T0 = datetime(2026, 12, 1, 3, 30, tzinfo=UTC)


def version(path: str, status: str = "candidate") -> NewAdapter:
    return NewAdapter(GLOBAL_SCOPE, "tiny", path, T0 - timedelta(days=14), T0, status=status)  # type: ignore[arg-type]


async def serving(store: Store) -> int | None:
    record = await store.adapters.serving_adapter()
    return None if record is None else record.version


async def test_rollback_walks_back_one_version_at_a_time_to_the_base_model(any_store: Store) -> None:
    v1, v2, v3 = [await any_store.adapters.add_adapter(version(f"v{n}")) for n in (1, 2, 3)]
    for record in (v1, v2, v3):
        await promote(any_store.adapters, record.version, T0)
    assert await serving(any_store) == v3.version

    change = await rollback(any_store.adapters, T0 + timedelta(hours=1))
    assert await serving(any_store) == v2.version
    assert change.describe() == f"v{v2.version} serves now (before: v{v3.version})"
    await rollback(any_store.adapters, T0 + timedelta(hours=2))
    assert await serving(any_store) == v1.version
    change = await rollback(any_store.adapters, T0 + timedelta(hours=3))
    assert await serving(any_store) is None
    assert change.describe() == f"the base model serves now (before: v{v1.version})"
    again = await rollback(any_store.adapters, T0 + timedelta(hours=4))
    assert not again.changed and again.describe() == "the base model already serves; nothing changed"


async def test_rollback_skips_failed_and_never_served_versions(any_store: Store) -> None:
    v1 = await any_store.adapters.add_adapter(version("v1"))
    await any_store.adapters.add_adapter(version("v2", status="failed"))
    v3 = await any_store.adapters.add_adapter(version("v3"))  # a candidate, never promoted
    v4 = await any_store.adapters.add_adapter(version("v4"))
    await promote(any_store.adapters, v1.version, T0)
    await promote(any_store.adapters, v4.version, T0)
    await rollback(any_store.adapters, T0)
    assert await serving(any_store) == v1.version
    assert (await any_store.adapters.get_adapter(v3.version)).status == "candidate"  # type: ignore[union-attr]


async def test_promote_names_unknown_and_failed_versions_in_plain_words(any_store: Store) -> None:
    failed = await any_store.adapters.add_adapter(version("v1", status="failed"))
    with pytest.raises(InvalidInput, match="there is no adapter version 99; `kindred adapters list`"):
        await promote(any_store.adapters, 99, T0)
    with pytest.raises(InvalidInput, match=f"v{failed.version} failed its checks"):
        await promote(any_store.adapters, failed.version, T0)
    good = await any_store.adapters.add_adapter(version("v2"))
    assert (await promote(any_store.adapters, good.version, T0)).describe() == (
        f"v{good.version} serves now (before: the base model)"
    )
    assert not (await promote(any_store.adapters, good.version, T0)).changed
