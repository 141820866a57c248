"""`kindred adapters status [--json] [--days N]` and `kindred adapters canary stop [--reason]`
through the real entry point, on both stores ([canary])."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.cli.main import main
from bot.core.learning.models import NewCanary, Variant
from bot.core.models import Feedback, Generation
from bot.core.store import Store
from bot.wiring.backends import open_store
from bot.wiring.settings import load_settings
from tests.store.test_learning_contract import prompt, reply

pytestmark = pytest.mark.usefixtures("kindred_env")
NOW = datetime.now(UTC)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def with_store(call: Callable[[Store], Coroutine[Any, Any, Any]]) -> Any:
    async def opened() -> Any:
        store = await open_store(load_settings(env_file=None))
        try:
            return await call(store)
        finally:
            await store.close()

    return asyncio.run(opened())


async def seed(store: Store) -> int:
    """Two base-model replies 10 days ago (+1, −1); today three of adapter v2 on the canary arm
    (+1, +1, unrated) and one base-model reply (−1); a decided canary and a running one."""
    old = await store.trials.start_canary(
        NewCanary("smol", Variant(1), Variant(), 0.2, 3, {}), NOW - timedelta(days=9)
    )
    assert old is not None
    await store.trials.decide_canary(old.id, "expired", "undecided after 7 days", NOW - timedelta(days=2))
    canary = await store.trials.start_canary(
        NewCanary("smol", Variant(2), Variant(), 0.5, 4, {"alpha": 0.01}), NOW - timedelta(hours=3)
    )
    assert canary is not None
    rows = [
        (NOW - timedelta(days=10), Generation(prompt("a"), None, False, base_model="smol"), 1.0),
        (NOW - timedelta(days=10), Generation(prompt("b"), None, False, base_model="smol"), -1.0),
        (NOW - timedelta(hours=2), Generation(prompt("c"), 2, False, base_model="smol", arm="canary",
                                              canary_id=canary.id), 1.0),
        (NOW - timedelta(hours=2), Generation(prompt("d"), 2, False, base_model="smol", arm="canary",
                                              canary_id=canary.id), 1.0),
        (NOW - timedelta(hours=2), Generation(prompt("e"), 2, False, base_model="smol", arm="canary",
                                              canary_id=canary.id), None),
        (NOW - timedelta(hours=1), Generation(prompt("f"), None, False, base_model="smol",
                                              canary_id=canary.id), -1.0),
    ]  # fmt: skip
    for i, (at, generation, value) in enumerate(rows):
        new = dataclasses.replace(reply("ann", key=f"k{i}", at=at), generation=generation)
        turn = await store.turns.add_turn(new)
        if value is not None:
            await store.turns.record_feedback(Feedback(turn.id, "ann", "x", value, at))
    point = {"at": NOW.isoformat(), "estimate": 0.5, "lower": -0.4, "upper": 1.4, "n_canary": 2,
             "n_serving": 1, "mean_canary": 1.0, "mean_serving": -1.0}  # fmt: skip
    assert await store.trials.enter(canary.id, [], {}, [point], before={})
    return canary.id


def test_status_shows_variants_with_intervals_and_the_canary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "adapters", "status", "--json")
    empty = json.loads(out)
    assert code == 0 and empty["variants"] == [] and empty["canary"] is None and empty["decided"] == []
    assert "No canary is running, and none has run yet." in run(capsys, "adapters", "status")[1]

    canary_id = with_store(seed)
    code, out, _ = run(capsys, "adapters", "status", "--json")
    report = json.loads(out)
    assert code == 0 and report["days"] == 7 and report["weights"] == {"alpha": 1.0, "gamma": 1.0}
    rows = {(r["variant"]["adapter"], r["arm"]): r for r in report["variants"]}
    assert set(rows) == {(None, "serving"), (2, "canary")}  # the replies 10 days ago are left out
    tuned = rows[(2, "canary")]
    assert (tuned["replies"], tuned["rated"], tuned["positive"], tuned["positive_rate"]) == (3, 2, 2, 1.0)
    low, high = tuned["positive_interval"]
    assert 0.3 < low < 0.35 and high == 1.0  # Wilson at 2 of 2
    assert rows[(None, "serving")]["negative_rate"] == 1.0
    assert report["canary"]["id"] == canary_id and report["canary"]["bounds"]["lower"] == -0.4
    assert [c["reason"] for c in report["decided"]] == ["undecided after 7 days"]

    code, out, _ = run(capsys, "adapters", "status", "--days", "30", "--json")
    assert json.loads(out)["variants"][0]["replies"] == 3  # the base model's two older replies too

    code, out, _ = run(capsys, "adapters", "status")
    assert code == 0 and "Variants, last 7 days (95 % intervals):" in out
    assert "adapter v2 on smol (canary): 3 replies, 2 rated, positive 100% [34%, 100%]" in out
    assert f"Canary {canary_id} is running since" in out and "adapter v2 answers 50% of replies" in out
    assert "kindred adapters canary stop stops it" in out
    assert "Decided before:\n  canary" in out and "expired, undecided after 7 days" in out


def test_canary_stop_stops_it_once_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "adapters", "canary", "stop")
    assert code == 0 and out == "No canary is running: nothing to stop.\n"
    canary_id = with_store(seed)
    code, out, _ = run(capsys, "adapters", "canary", "stop", "--reason", "users complained", "--json")
    stopped = json.loads(out)
    assert code == 0 and stopped["id"] == canary_id and stopped["status"] == "stopped"
    assert stopped["reason"] == "stopped by an admin: users complained"
    code, out, _ = run(capsys, "adapters", "status", "--json")
    report = json.loads(out)
    assert report["canary"] is None and report["decided"][0]["decision"] == "stopped"
    assert run(capsys, "adapters", "canary", "stop")[1] == "No canary is running: nothing to stop.\n"
    assert with_store(lambda store: store.adapters.serving_adapter()) is None


def test_bad_days_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("0", "-3", "week"):
        with pytest.raises(SystemExit):
            main(["adapters", "status", "--days", bad])
        assert "is not a number of days" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["adapters", "canary"])
