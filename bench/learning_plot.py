"""The learning simulation's curve as a PNG, per day: what serves, the canary, and the base model.

.venv/bin/python -m bench.learning_plot RESULT.json OUT.png
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SERVING, CANARY, BASE = "#FF9AA2", "#6C5B7B", "#8FA3A8"


def plot(result: Mapping[str, Any], out: Path) -> None:
    """Day 0 is served by the base model; day n is night n's canary day, and its point is what
    serves after it. A canary that was not promoted is drawn hollow; a night with no canary has
    no canary point."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file, on a server
    import matplotlib.pyplot as plt

    base = 100 * result["base_rate"]
    served = [base, *(100 * r for r in result["rates"])]
    days = list(range(len(served)))
    figure, axes = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    axes.axhline(base, color=BASE, linestyle="--", label="base model")
    axes.plot(days, served, marker="o", color=SERVING, label="serving (after the day)")
    canaries = zip(result["candidate_rates"], result["promoted"], strict=True)
    for day, (rate, promoted) in enumerate(canaries, 1):
        if rate is not None:
            axes.scatter(
                [day], [100 * rate], s=60, zorder=3, edgecolors=CANARY,
                facecolors=CANARY if promoted else "none",
            )  # fmt: skip
    axes.scatter([], [], s=60, edgecolors=CANARY, facecolors="none", label="canary (hollow: not promoted)")
    axes.set_xticks(days, ["day 0", *(f"day {n}" for n in days[1:])])
    axes.set_ylabel(f"held-out replies meeting the taste ({result['taste']}), %")
    axes.set_ylim(bottom=0)
    how = f"{result['teacher']} teacher, noise {result['noise']:g}, learner {result.get('learner', 'lora')}"
    lift = f"{result['lift_points']:+.1f} points"
    axes.set_title(f"Kindred learns from reactions: {lift}\n({how})", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(loc="best")
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        raise SystemExit("usage: python -m bench.learning_plot RESULT.json OUT.png")
    lines = Path(args[0]).read_text(encoding="utf-8").strip().splitlines()
    plot(json.loads(lines[-1]), Path(args[1]))


if __name__ == "__main__":
    main()
