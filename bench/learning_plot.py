"""The learning simulation's curve as a PNG: the served rate and each night's candidate, per night.

.venv/bin/python -m bench.learning_plot RESULT.json OUT.png
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def plot(result: Mapping[str, Any], out: Path) -> None:
    """Night 0 is the base model; a candidate the gate refused is drawn hollow."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file, on a server
    import matplotlib.pyplot as plt

    served = [result["base_rate"], *result["rates"]]
    nights = list(range(len(served)))
    figure, axes = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    axes.plot(nights, [100 * r for r in served], marker="o", color="#FF9AA2", label="served")
    candidates = zip(result["candidate_rates"], result["promoted"], strict=True)
    for night, (rate, promoted) in enumerate(candidates, 1):
        if rate is not None:
            axes.scatter(
                [night], [100 * rate], s=60, zorder=3, edgecolors="#6C5B7B",
                facecolors="#6C5B7B" if promoted else "none",
            )  # fmt: skip
    axes.scatter([], [], s=60, edgecolors="#6C5B7B", facecolors="none", label="candidate (hollow: refused)")
    axes.set_xticks(nights, ["base", *(f"night {n}" for n in nights[1:])])
    axes.set_ylabel(f"held-out replies meeting the taste ({result['taste']}), %")
    axes.set_ylim(bottom=0)
    teacher = "random teacher" if result["teacher"] == "random" else f"noise {result['noise']:g}"
    axes.set_title(f"Kindred learns from reactions: {result['lift_points']:+.1f} points ({teacher})")
    axes.grid(alpha=0.3)
    axes.legend(loc="best")  # a promoted last night sits in the upper right
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
