"""`kindred train dataset` and `kindred train now` through the real entry point: the night's
statistics without training, then one real nightly run (a tiny model, a few KTO steps) whose
adapter `kindred adapters list` shows. On each store (`kindred_env`); the registry's other
commands are in test_adapters_cli.py."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.wiring.backends import open_store
from bot.wiring.settings import load_settings
from tests.support.learning import rated_replies

pytestmark = pytest.mark.usefixtures("kindred_env")


@pytest.fixture
def tiny_training(monkeypatch: pytest.MonkeyPatch, tiny_model: Path) -> None:
    """The tiny model serves and trains: four steps of four, on the CPU."""
    for name, value in {
        "KINDRED_MODEL": str(tiny_model),
        "KINDRED_TRAIN_MAX_STEPS": "4",
        "KINDRED_TRAIN_BATCH_SIZE": "4",
        "KINDRED_TRAIN_LEARNING_RATE": "0.005",
        "KINDRED_TRAIN_DEVICE": "cpu",
        "KINDRED_TRAIN_HELDOUT_SHARE": "0.5",
    }.items():
        monkeypatch.setenv(name, value)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def _seed(per_label: int, persona: str | None = None, model: str = "") -> None:
    store = await open_store(load_settings(env_file=None))
    try:
        await rated_replies(
            store, per_label, datetime.now(UTC) - timedelta(days=1), persona=persona, model=model
        )
    finally:
        await store.close()


def test_dataset_statistics_without_training(capsys: pytest.CaptureFixture[str], tiny_training: None) -> None:
    code, out, _ = run(capsys, "train", "dataset", "--json")
    empty = json.loads(out)
    assert code == 0 and empty["examples"] == {"desirable": 0, "undesirable": 0}
    assert empty["shortfall"].startswith("not enough data: ")
    asyncio.run(_seed(20))
    code, out, _ = run(capsys, "train", "dataset", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["shortfall"] is None and stats["people"] == 3 and stats["window_days"] == 14
    examples, heldout = stats["examples"], stats["heldout"]
    assert examples["desirable"] + examples["undesirable"] + sum(heldout.values()) == 40
    assert set(stats["weights"]) == {"desirable", "undesirable"} and max(stats["weights"].values()) >= 1
    assert {"window_start", "window_end"} <= set(stats)
    code, out, _ = run(capsys, "train", "dataset")
    assert code == 0 and "desirable (weight" in out and "from 3 people" in out
    assert run(capsys, "adapters", "list")[1].startswith("no adapter versions yet")  # nothing trained


def test_the_dataset_can_be_one_personas_or_one_models(capsys: pytest.CaptureFixture[str]) -> None:
    """Coach's replies come from the configured model, the tutor's from another listed one: the
    night's set is the configured model's alone; `--model` shows any model's."""
    asyncio.run(_seed(4, persona="coach", model=load_settings(env_file=None).inference.model))
    asyncio.run(_seed(3, persona="tutor", model="smollm2-360m"))

    def counted(*flags: str) -> tuple[int, int]:
        code, out, err = run(capsys, "train", "dataset", "--json", *flags)
        stats = json.loads(out)
        assert code == 0, err
        kept = sum(stats["examples"].values()) + sum(stats["heldout"].values())
        return kept, stats["left_out"]["filtered"]

    assert counted() == (8, 6)
    assert counted("--persona", "coach") == (8, 6)
    assert counted("--persona", "Tutor", "--model", "smollm2-360m") == (6, 8)
    assert counted("--model", "qwen-7b") == (0, 14)
    code, out, _ = run(capsys, "train", "dataset", "--persona", "coach")
    assert code == 0 and out.splitlines()[0].endswith("; only persona coach (6 other rated replies left out)")
    with pytest.raises(SystemExit) as refused:  # argparse: one line on stderr, status 2
        run(capsys, "train", "dataset", "--persona", "  ")
    assert refused.value.code == 2 and "is not a name" in capsys.readouterr().err


def test_train_now_runs_one_night_here(capsys: pytest.CaptureFixture[str], tiny_training: None) -> None:
    code, out, _ = run(capsys, "train", "now")
    assert code == 0 and out.startswith("skipped: not enough data: ")
    asyncio.run(_seed(20))
    code, out, _ = run(capsys, "train", "now", "--json")
    result = json.loads(out)
    assert code == 0 and result["status"] == "succeeded" and result["version"] == 1
    assert set(result["gate"]["checks"]) == {"heldout_margin", "regression_loss", "kl_to_base", "sycophancy"}
    code, out, _ = run(capsys, "adapters", "list", "--json")
    (listed,) = [json.loads(line) for line in out.splitlines()]
    assert listed["status"] == ("serving" if result["promoted"] else "failed") and listed["path"] == "v1"
    data = Path(load_settings(env_file=None).data_dir)
    assert (data / "adapters" / "v1" / "adapter_config.json").is_file()
