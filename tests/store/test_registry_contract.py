"""The adapter registry and training runs ([learning]), on SQLite and on Postgres + pgvector: versions
ascend, one serving version per scope however promotions race, failed versions never serve, one
run at a time, and a redelivered or silent run is failed before the next starts."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.core.errors import InvalidInput, StoreError
from bot.core.learning.models import GLOBAL_SCOPE, NewAdapter
from bot.core.store import Store
from tests.store.test_contract import T0

HOUR = timedelta(hours=1)


def candidate(path: str, *, scope: str = GLOBAL_SCOPE, status: str = "candidate") -> NewAdapter:
    return NewAdapter(
        scope, "HuggingFaceTB/SmolLM2-135M-Instruct", path, T0 - timedelta(days=14), T0,
        status=status, run_id=7, dataset={"examples": {"desirable": 5}}, metrics={"loss": 0.5},  # type: ignore[arg-type]
        gate={"passed": True},
    )  # fmt: skip


async def test_versions_ascend_and_list_newest_first(store: Store) -> None:
    assert await store.adapters.list_adapters() == [] and await store.adapters.serving_adapter() is None
    first = await store.adapters.add_adapter(candidate("v1"))
    second = await store.adapters.add_adapter(candidate("v2"))
    other = await store.adapters.add_adapter(candidate("p1", scope="telegram:42"))
    assert first.version < second.version < other.version
    assert (first.status, first.path, first.run_id, first.promoted_at) == ("candidate", "v1", 7, None)
    assert first.dataset == {"examples": {"desirable": 5}} and first.metrics == {"loss": 0.5}
    assert (first.window_start, first.window_end) == (T0 - timedelta(days=14), T0)
    assert [a.version for a in await store.adapters.list_adapters()] == [second.version, first.version]
    assert [a.version for a in await store.adapters.list_adapters("telegram:42")] == [other.version]
    assert await store.adapters.get_adapter(first.version) == first
    assert await store.adapters.get_adapter(999_999) is None


async def test_a_new_version_is_a_candidate_or_failed(store: Store) -> None:
    assert (await store.adapters.add_adapter(candidate("v1", status="failed"))).status == "failed"
    for status in ("serving", "retired"):
        with pytest.raises(InvalidInput):
            await store.adapters.add_adapter(candidate("v2", status=status))


async def test_promote_serves_one_and_retires_the_last(store: Store) -> None:
    v1 = await store.adapters.add_adapter(candidate("v1"))
    v2 = await store.adapters.add_adapter(candidate("v2"))
    assert await store.adapters.promote_adapter(v1.version, T0) is None
    serving = await store.adapters.serving_adapter()
    assert serving is not None and (serving.version, serving.status, serving.promoted_at) == (
        v1.version,
        "serving",
        T0,
    )
    retired = await store.adapters.promote_adapter(v2.version, T0 + HOUR)
    assert retired is not None and (retired.version, retired.status) == (v1.version, "retired")
    assert await store.adapters.promote_adapter(v2.version, T0 + HOUR) is None, (
        "promoting what serves: no change"
    )
    assert [(a.version, a.status) for a in await store.adapters.list_adapters()] == [
        (v2.version, "serving"),
        (v1.version, "retired"),
    ]
    back = await store.adapters.promote_adapter(v1.version, T0 + 2 * HOUR)  # a rollback serves a retired one
    assert back is not None and back.version == v2.version
    assert (await store.adapters.serving_adapter()) == await store.adapters.get_adapter(v1.version)


async def test_scopes_serve_apart(store: Store) -> None:
    mine = await store.adapters.add_adapter(candidate("p1", scope="telegram:42"))
    shared = await store.adapters.add_adapter(candidate("v1"))
    await store.adapters.promote_adapter(mine.version, T0)
    await store.adapters.promote_adapter(shared.version, T0)
    assert (await store.adapters.serving_adapter("telegram:42")) == await store.adapters.get_adapter(
        mine.version
    )
    assert (await store.adapters.serving_adapter()) == await store.adapters.get_adapter(shared.version)


async def test_concurrent_promotions_leave_one_serving(store: Store) -> None:
    versions = [(await store.adapters.add_adapter(candidate(f"v{n}"))).version for n in range(6)]
    results = await asyncio.gather(
        *(store.adapters.promote_adapter(version, T0) for version in versions), return_exceptions=True
    )
    assert not [r for r in results if isinstance(r, BaseException)]
    statuses = [a.status for a in await store.adapters.list_adapters()]
    assert statuses.count("serving") == 1 and statuses.count("retired") == 5


async def test_a_failed_or_unknown_version_is_never_promoted(store: Store) -> None:
    failed = await store.adapters.add_adapter(candidate("v1", status="failed"))
    with pytest.raises(InvalidInput, match="failed"):
        await store.adapters.promote_adapter(failed.version, T0)
    with pytest.raises(InvalidInput, match="no adapter version"):
        await store.adapters.promote_adapter(999_999, T0)
    assert await store.adapters.serving_adapter() is None


async def test_status_changes_and_the_gate_report(store: Store) -> None:
    v1 = await store.adapters.add_adapter(candidate("v1"))
    assert await store.adapters.set_adapter_status(v1.version, "failed", gate={"passed": False, "checks": []})
    found = await store.adapters.get_adapter(v1.version)
    assert found is not None and (found.status, found.gate) == ("failed", {"passed": False, "checks": []})
    assert await store.adapters.set_adapter_status(v1.version, "retired")  # no report given: it stays
    found = await store.adapters.get_adapter(v1.version)
    assert found is not None and (found.status, found.gate) == ("retired", {"passed": False, "checks": []})
    assert not await store.adapters.set_adapter_status(999_999, "retired")
    with pytest.raises(InvalidInput, match="promote"):
        await store.adapters.set_adapter_status(v1.version, "serving")


async def test_serve_base_retires_the_serving_version(store: Store) -> None:
    assert await store.adapters.serve_base(GLOBAL_SCOPE, T0) is None
    v1 = await store.adapters.add_adapter(candidate("v1"))
    await store.adapters.promote_adapter(v1.version, T0)
    retired = await store.adapters.serve_base(GLOBAL_SCOPE, T0 + HOUR)
    assert retired is not None and (retired.version, retired.status) == (v1.version, "retired")
    assert await store.adapters.serving_adapter() is None


async def test_the_database_refuses_a_second_serving_row(any_store: Store) -> None:
    """Behind the registry's own checks, the partial unique index holds against any writer."""
    first = (await any_store.adapters.add_adapter(candidate("v1"))).version
    second = (await any_store.adapters.add_adapter(candidate("v2"))).version
    await any_store.adapters.promote_adapter(first, T0)
    with pytest.raises(StoreError):
        await _raw_write(any_store, f"UPDATE adapters SET status = 'serving' WHERE version = {second}")
    with pytest.raises(StoreError):
        await _raw_write(
            any_store,
            "INSERT INTO adapters (scope, base_model, path, window_start, window_end, status, created_at)"
            " SELECT scope, base_model, 'v9', window_start, window_end, 'serving', created_at"
            f" FROM adapters WHERE version = {first}",
        )
    assert [a.status for a in await any_store.adapters.list_adapters()].count("serving") == 1
    assert await any_store.adapters.start_run("job", T0, HOUR) is not None
    with pytest.raises(StoreError):  # nor two running runs
        await _raw_write(
            any_store,
            "INSERT INTO training_runs (job_key, status, started_at)"
            " SELECT 'other', 'running', started_at FROM training_runs",
        )


async def _raw_write(store: Store, sql: str) -> None:
    """One statement past the registry, the way another tool or an old process might write."""
    from bot.store.postgres.store import PostgresStore
    from bot.store.sqlite.store import SqliteStore

    if isinstance(store, SqliteStore):
        async with store._db.write() as db:
            await db.execute(sql)
    else:
        assert isinstance(store, PostgresStore)
        async with store._pool.connection() as conn:
            await conn.execute(sql)  # type: ignore[arg-type]


async def test_one_run_at_a_time(store: Store) -> None:
    run = await store.adapters.start_run("job-1", T0, HOUR)
    assert run is not None and (run.status, run.job_key, run.started_at, run.heartbeat_at) == (
        "running", "job-1", T0, T0,
    )  # fmt: skip
    assert await store.adapters.start_run("job-2", T0 + timedelta(minutes=5), HOUR) is None
    assert (await store.adapters.get_run(run.id)) == run, "a refused start leaves the running one alone"
    await store.adapters.finish_run(
        run.id, "succeeded", "promoted v1", T0 + timedelta(minutes=9), adapter_version=1
    )
    nxt = await store.adapters.start_run("job-2", T0 + timedelta(minutes=10), HOUR)
    assert nxt is not None and nxt.id > run.id


async def test_concurrent_starts_let_one_run(store: Store) -> None:
    results = await asyncio.gather(*(store.adapters.start_run(f"job-{n}", T0, HOUR) for n in range(6)))
    assert len([run for run in results if run is not None]) == 1
    assert [r.status for r in await store.adapters.list_runs(10)].count("running") == 1


async def test_a_redelivered_job_fails_its_old_run_and_starts_clean(store: Store) -> None:
    old = await store.adapters.start_run("celery-abc", T0, HOUR)
    assert old is not None
    new = await store.adapters.start_run("celery-abc", T0 + timedelta(minutes=1), HOUR)
    assert new is not None and new.id != old.id and new.status == "running"
    failed = await store.adapters.get_run(old.id)
    assert failed is not None and failed.status == "failed" and "delivered again" in failed.message
    assert failed.finished_at == T0 + timedelta(minutes=1)
    # The old worker, had it lived on, can neither log nor finish the run a successor failed.
    await store.adapters.log_run_step(old.id, {"step": 1}, T0 + timedelta(minutes=2))
    await store.adapters.finish_run(old.id, "succeeded", "done", T0 + timedelta(minutes=3))
    assert await store.adapters.get_run(old.id) == failed


async def test_a_run_without_a_heartbeat_goes_stale(store: Store) -> None:
    quiet = await store.adapters.start_run("job-1", T0, HOUR)
    assert quiet is not None
    await store.adapters.log_run_step(quiet.id, {"step": 1, "loss": 0.7}, T0 + timedelta(minutes=50))
    assert await store.adapters.start_run("job-2", T0 + timedelta(minutes=100), HOUR) is None, (
        "beat 50 min ago"
    )
    later = await store.adapters.start_run("job-2", T0 + timedelta(minutes=111), HOUR)
    assert later is not None
    stale = await store.adapters.get_run(quiet.id)
    assert stale is not None and stale.status == "failed" and "no progress" in stale.message


async def test_steps_are_logged_in_order_and_finish_keeps_the_result(store: Store) -> None:
    run = await store.adapters.start_run("job-1", T0, HOUR)
    assert run is not None
    steps = [{"step": n, "loss": 1.0 / (n + 1), "kl": 0.01 * n, "margin": n - 1.5} for n in range(4)]
    for n, step in enumerate(steps):
        await store.adapters.log_run_step(run.id, step, T0 + timedelta(minutes=n))
    logged = await store.adapters.get_run(run.id)
    assert (
        logged is not None
        and list(logged.steps) == steps
        and logged.heartbeat_at == T0 + timedelta(minutes=3)
    )
    result = {"examples": {"desirable": 6, "undesirable": 6}, "gate": {"passed": False}}
    await store.adapters.finish_run(
        run.id, "failed", "the gate refused v3", T0 + HOUR, result=result, adapter_version=3
    )
    done = await store.adapters.get_run(run.id)
    assert done is not None
    assert (done.status, done.message, done.finished_at, done.adapter_version) == (
        "failed", "the gate refused v3", T0 + HOUR, 3,
    )  # fmt: skip
    assert done.result == result and list(done.steps) == steps
    with pytest.raises(InvalidInput):
        await store.adapters.finish_run(run.id, "running", "", T0)


async def test_runs_list_newest_first(store: Store) -> None:
    assert await store.adapters.list_runs(5) == [] and await store.adapters.get_run(1) is None
    ids = []
    for n in range(3):
        run = await store.adapters.start_run(f"job-{n}", T0 + n * HOUR, HOUR)
        assert run is not None
        ids.append(run.id)
        await store.adapters.finish_run(run.id, "skipped", "not enough data", T0 + n * HOUR)
    assert [r.id for r in await store.adapters.list_runs(2)] == ids[::-1][:2]
    assert await store.adapters.list_runs(0) == []
