"""`kindred adapters list|show|promote|rollback` through the real entry point, on both stores."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.cli.main import main
from bot.core.learning.models import GLOBAL_SCOPE, NewAdapter
from bot.wiring.backends import open_store
from bot.wiring.settings import load_settings

pytestmark = pytest.mark.usefixtures("kindred_env")
T0 = datetime(2026, 12, 1, 3, 30, tzinfo=UTC)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def _registered(statuses: list[str]) -> list[int]:
    store = await open_store(load_settings(env_file=None))
    try:
        versions = []
        for n, status in enumerate(statuses, start=1):
            record = await store.adapters.add_adapter(
                NewAdapter(
                    GLOBAL_SCOPE, "tiny", f"v{n}", T0 - timedelta(days=14), T0,
                    status=status, dataset={"examples": {"desirable": 6, "undesirable": 5}},  # type: ignore[arg-type]
                    gate={"passed": status != "failed", "checks": [{"name": "sycophancy", "passed": True}]},
                )
            )  # fmt: skip
            versions.append(record.version)
        return versions
    finally:
        await store.close()


def registered(*statuses: str) -> list[int]:
    return asyncio.run(_registered(list(statuses)))


def test_list_promote_show_and_rollback(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "adapters", "list")
    assert code == 0 and "the base model serves" in out
    v1, v2, v3 = registered("candidate", "candidate", "failed")

    assert run(capsys, "adapters", "promote", f"v{v1}")[1] == f"v{v1} serves now (before: the base model)\n"
    assert run(capsys, "adapters", "promote", str(v2))[1] == f"v{v2} serves now (before: v{v1})\n"
    code, out, _ = run(capsys, "adapters", "list", "--json")
    listed = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [(a["version"], a["status"]) for a in listed] == [
        (v3, "failed"),
        (v2, "serving"),
        (v1, "retired"),
    ]
    code, out, _ = run(capsys, "adapters", "list")
    assert f"v{v2}  serving" in out and "6+ / 5− examples" in out

    code, out, _ = run(capsys, "adapters", "show", str(v3))
    shown = json.loads(out)
    assert code == 0 and shown["gate"]["checks"][0]["name"] == "sycophancy" and shown["path"] == "v3"

    assert run(capsys, "adapters", "rollback")[1] == f"v{v1} serves now (before: v{v2})\n"
    assert run(capsys, "adapters", "rollback")[1] == f"the base model serves now (before: v{v1})\n"


def test_unknown_or_failed_versions_are_refused_in_plain_words(capsys: pytest.CaptureFixture[str]) -> None:
    (failed,) = registered("failed")
    code, _, err = run(capsys, "adapters", "promote", "42")
    assert err == "kindred: there is no adapter version 42; `kindred adapters list` shows them\n"
    assert code == 1
    code, _, err = run(capsys, "adapters", "show", "v42")
    assert code == 1 and "there is no adapter version 42" in err
    code, _, err = run(capsys, "adapters", "promote", str(failed))
    assert code == 1 and f"v{failed} failed its checks, so it cannot serve" in err
    with pytest.raises(SystemExit):
        main(["adapters", "promote", "latest"])
    assert "is not a version (3 or v3)" in capsys.readouterr().err
