"""The AppStore contract, on SQLite and on PostgreSQL: apps and whole versions, restore,
revocation, the cache key, the per-person build limit, and the state quota."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.core.miniapps.models import NewVersion, Rendered
from bot.core.store import Store

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
STALE = timedelta(minutes=10)


def _version(title: str = "Beach", key: str = "k1", theme: str = "auto") -> NewVersion:
    spec = {"title": title, "theme": theme, "items": [{"text": "Towel"}]}
    return NewVersion("checklist", title, spec, Rendered(f"<p>{title}</p>", ("sha256-a",), ("sha256-b",)),
                      "a beach list", key, "rules")  # fmt: skip


async def test_an_app_keeps_every_version_whole_and_can_serve_an_old_one(store: Store) -> None:
    apps = store.miniapps
    app = await apps.create_app("telegram:1", "telegram:1", "tok-1", _version(), NOW)
    assert (app.version, app.latest, app.title, app.revoked) == (1, 1, "Beach", False)
    second = await apps.add_version(app.id, _version("Beach, dark", "k2", "dark"), NOW + timedelta(seconds=1))
    assert (second.version, second.latest, second.title) == (2, 2, "Beach, dark")
    first = await apps.get_version(app.id, 1)
    assert first is not None and first.body.spec["theme"] == "auto"
    assert first.body.rendered == Rendered("<p>Beach</p>", ("sha256-a",), ("sha256-b",))
    restored = await apps.serve_version("telegram:1", app.id, 1, NOW + timedelta(seconds=2))
    assert restored is not None and (restored.version, restored.latest, restored.title) == (1, 2, "Beach")
    assert await apps.serve_version("telegram:1", app.id, 7, NOW) is None
    assert await apps.serve_version("telegram:2", app.id, 1, NOW) is None  # not theirs
    third = await apps.add_version(app.id, _version("Beach 3", "k3"), NOW + timedelta(seconds=3))
    assert (third.version, third.latest) == (3, 3)


async def test_links_find_apps_and_revocation_is_for_good(store: Store) -> None:
    apps = store.miniapps
    app = await apps.create_app("discord:7", "discord:9", "tok-2", _version(), NOW)
    found = await apps.app_by_token("tok-2")
    assert found == app and await apps.app_by_token("tok-x") is None
    assert await apps.revoke("discord:8", app.id, NOW) is False  # someone else's
    assert await apps.revoke("discord:7", app.id, NOW) is True
    assert await apps.revoke("discord:7", app.id, NOW) is False
    revoked = await apps.app_by_token("tok-2")
    assert revoked is not None and revoked.revoked
    assert await apps.find_cached("discord:7", "k1") is None
    assert await apps.serve_version("discord:7", app.id, 1, NOW) is None


async def test_the_cache_finds_the_persons_live_app_by_the_served_versions_key(store: Store) -> None:
    apps = store.miniapps
    app = await apps.create_app("console:a", "console", "tok-3", _version(key="same"), NOW)
    assert await apps.find_cached("console:a", "same") == app
    assert await apps.find_cached("console:b", "same") is None
    await apps.add_version(app.id, _version(key="other"), NOW)
    assert await apps.find_cached("console:a", "same") is None
    listed = await apps.list_apps("console:a", 10)
    assert [a.id for a in listed] == [app.id] and listed[0].version == 2


async def test_a_person_runs_at_most_the_limit_of_builds_at_once(store: Store) -> None:
    apps = store.miniapps
    first = await apps.start_build("b1", "p", NOW, limit=2, stale_after=STALE)
    assert first is not None and first.status == "running"
    assert await apps.start_build("b2", "p", NOW, limit=2, stale_after=STALE) is not None
    assert await apps.start_build("b3", "p", NOW, limit=2, stale_after=STALE) is None
    assert await apps.start_build("q1", "q", NOW, limit=2, stale_after=STALE) is not None  # others go on
    assert await apps.start_build("b1", "p", NOW, limit=2, stale_after=STALE) is not None  # redelivery
    await apps.build_step("b1", "drawing", NOW)
    await apps.finish_build("b1", "failed", "too big", NOW)
    build = await apps.get_build("b1")
    assert build is not None and (build.status, build.step, build.message) == ("failed", "drawing", "too big")
    assert await apps.start_build("b3", "p", NOW, limit=2, stale_after=STALE) is not None
    # A build that stopped answering does not hold a place for ever.
    later = NOW + STALE + timedelta(seconds=1)
    assert await apps.start_build("b4", "p", later, limit=2, stale_after=STALE) is not None
    stale = await apps.get_build("b2")
    assert stale is not None and stale.status == "failed"


async def test_concurrent_starts_never_pass_the_limit(store: Store) -> None:
    started = await asyncio.gather(
        *(store.miniapps.start_build(f"c{i}", "racer", NOW, limit=2, stale_after=STALE) for i in range(8))
    )
    assert sum(build is not None for build in started) == 2


async def test_state_is_per_app_and_stays_under_its_quota(store: Store) -> None:
    apps = store.miniapps
    one = await apps.create_app("p", "p", "tok-4", _version(), NOW)
    two = await apps.create_app("p", "p", "tok-5", _version(), NOW)
    assert await apps.write_state(one.id, "items", '["é"]', quota_bytes=20, at=NOW)
    assert await apps.read_state(one.id) == {"items": '["é"]'}
    assert await apps.read_state(two.id) == {}
    assert not await apps.write_state(one.id, "other", "x" * 20, quota_bytes=20, at=NOW)
    assert await apps.write_state(one.id, "items", "y" * 15, quota_bytes=20, at=NOW)  # replacing frees
    assert await apps.read_state(one.id) == {"items": "y" * 15}
