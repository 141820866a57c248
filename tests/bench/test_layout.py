"""bench/'s layout (bench/__init__.py): entry points at the top, their helpers under bench/parts/."""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"

# What the Makefile, the docs, scripts/gpu_check.sh and tests/bench run as `python -m bench.<name>`.
PROMISED = {
    "apps", "canary_power", "consolidation_recall", "inference", "learning_plot", "learning_sim", "memory",
    "proactive_sim", "recall", "recall_evidence", "reply_budget", "reward_sim", "soak", "startup",
    "sycophancy_refusals", "telegram_load", "training", "worker_overhead", "media",
}  # fmt: skip


def runs_as_main(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body)


def test_the_top_level_holds_the_entry_points_and_nothing_else() -> None:
    top = {p.stem for p in BENCH.glob("*.py")} - {"__init__"}
    assert top == PROMISED
    assert not [name for name in sorted(top) if not runs_as_main(BENCH / f"{name}.py")]


def test_no_helper_package_shadows_an_entry_point() -> None:
    """`bench/soak/` beside `bench/soak.py` would make `python -m bench.soak` ambiguous."""
    assert not {p.name for p in BENCH.iterdir() if p.is_dir() and p.name != "__pycache__"} - {"parts"}
    assert all((p / "__init__.py").exists() for p in (BENCH / "parts").iterdir() if p.is_dir()
               and p.name != "__pycache__")  # fmt: skip
