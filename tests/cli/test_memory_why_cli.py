"""`kindred memory why --turn ID` and `kindred memory search --explain`, on both stores, with the
real MiniLM embedder for the search."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bot.cli.main import main
from bot.core.models import Feedback, NewTurn
from bot.wiring.backends import open_store
from bot.wiring.settings import load_settings

pytestmark = pytest.mark.usefixtures("kindred_env")
T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [
        {"text": "I switched to decaf because coffee keeps me awake", "timestamp": "2026-05-02T08:15:00Z"},
        {"text": "My daughter Lina starts school in September", "timestamp": "2026-06-10T19:00:00Z"},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert run(capsys, "memory", "import", "--user", "ann", str(source))[0] == 0


async def rated_reply(user: str, shares: dict[int, float], emoji: str, value: float) -> int:
    store = await open_store(load_settings(env_file=None))
    try:
        vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
        reply = await store.turns.add_turn(
            NewTurn(
                user,
                "c1",
                "assistant",
                "Decaf it is.",
                vector,
                "m",
                T0,
                used_memory_ids=tuple(shares),
                memory_shares=tuple(shares.values()),
            )
        )
        await store.turns.record_feedback(Feedback(reply.id, user, emoji, value, T0))
        return reply.id
    finally:
        await store.close()


def test_why_explains_a_replys_reward_and_its_memories_credit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    imported(tmp_path, capsys)
    turn_id = asyncio.run(rated_reply("ann", {1: 0.8, 2: 0.2}, "👎", -1.0))

    code, out, _ = run(capsys, "memory", "why", "--turn", str(turn_id), "--json")
    assert code == 0
    why = json.loads(out)
    assert why["turn_id"] == turn_id and why["user"] == "ann"
    assert why["components"] == {
        "tool_uses": 0,
        "turns_followed": 0,
        "proactive_successes": 0,
        "reaction": -1.0,
        "reactions": 1,
    }
    assert why["reward"] == -1.0 and set(why["weights"]) == {"alpha", "beta", "gamma"}
    assert [(m["id"], m["share"], m["credit"], m["total"]) for m in why["memories"]] == [
        (1, 0.8, -0.8, -0.8),
        (2, 0.2, -0.2, -0.2),
    ]
    assert why["memories"][0]["text"].startswith("I switched to decaf")

    code, out, _ = run(capsys, "memory", "why", "--turn", str(turn_id))
    assert code == 0 and f"reply #{turn_id} of ann: R = -1.000" in out and "share 0.800" in out

    code, _, err = run(capsys, "memory", "why", "--turn", "424242")
    assert code == 1 and "no turn #424242" in err


def test_search_explain_says_why_each_memory_was_chosen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    imported(tmp_path, capsys)
    asyncio.run(rated_reply("ann", {1: 1.0}, "❤️", 1.0))
    query = "why can't I sleep after coffee?"

    code, out, _ = run(capsys, "memory", "search", "--user", "ann", "--k", "2", "--json", "--explain", query)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 2
    first = rows[0]
    assert first["id"] == 1 and first["kind"] == "imported"
    assert set(first["why"]) == {
        "relevance",
        "speaker",
        "reward",
        "reward_norm",
        "decay",
        "verification",
        "weight",
        "favoured",
    }
    assert first["why"]["reward"] == 1.0 and first["why"]["favoured"] is True
    assert rows[1]["why"]["reward"] == 0.0 and rows[1]["why"]["reward_norm"] == 0.5

    code, out, _ = run(capsys, "memory", "search", "--user", "ann", "--k", "1", "--explain", query)
    assert code == 0 and "imported: relevance" in out and "favoured" in out
