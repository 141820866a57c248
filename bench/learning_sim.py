"""Proof that Kindred learns: simulated people with a hidden taste react, the nightly job trains on
their reactions, and the next day's replies use what the gate promoted.

Everything runs through the product's own parts:
- the day: simulated people chat through `Conversation` (the real SQLite store, the MiniLM embedder
  and the bundled SmolLM2 on the local engine, sampling as shipped), and react through the real
  reaction path (`Conversation.handle_reaction`) with 👍 or 👎;
- the night: the real `kindred.training.nightly` job from the job registry (dataset → KTO + LoRA →
  gate → promote);
- the next day: the conversation asks the registry for the serving adapter, as in production.

A hidden taste can be checked in code (`TASTES`): by default a reply that ends with a question back
to the person. The base model meets it in only a few percent of replies (the rare-hit cold start),
so each prompt is answered several times (each in a chat of its own), and the dataset's class
weights balance the few hits against the many misses. The teacher gives 👍 to every reply that
meets the taste and 👎 to a quarter of the others (`--react-to-misses`), letting the rest pass, as
people react to what pleases them and only now and then to what does not; every reaction given is
then flipped with probability `--noise` (0.1). With the base model's few percent of hits, reacting
to every miss would make most 👍 flips of misses. `--teacher random` reacts to every reply by a
coin: the gate must promote nothing.

The rate is measured on held-out prompts that no simulated person ever sends, with no flips: the
share of replies that meet the taste. The served rate is measured before the first night and after
each one; a night's candidate is measured too, promoted or not, so the plot shows what the gate saw.

Model extraction is off (it costs seconds per turn on a CPU and finds nothing with the default model).

    .venv/bin/python -m bench.learning_sim --quick       # one night, ~15 min on 2 cores
    .venv/bin/python -m bench.learning_sim --plot docs/learning_sim.png
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import re
import sys
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.parts.chatter import chatter_line
from bench.parts.common import exit_cleanly_on_sigterm

TARGET_POINTS = 20.0
QUICK_TARGET_POINTS = 5.0
TARGET_MINUTES = 60.0
QUICK_TARGET_MINUTES = 15.0
_SENTENCE_END = re.compile(r"[.!?…]['\")\]]*\s*$")


def asks_back(reply: str) -> bool:
    """The reply ends with a question back to the person (its last character is a "?")."""
    return reply.rstrip().rstrip("\"')]").endswith("?")


def short_and_finished(reply: str) -> bool:
    """At most 25 words, and the last sentence is finished."""
    return len(reply.split()) <= 25 and bool(_SENTENCE_END.search(reply))


TASTES: dict[str, Callable[[str], bool]] = {"question": asks_back, "short": short_and_finished}


@dataclass(frozen=True, slots=True)
class Plan:
    nights: int
    people: int
    prompts_per_chat: int  # each candidate chat holds this many prompts, one after the other
    candidates: int  # chats per person answering the same prompts
    eval_prompts: int
    eval_samples: int
    max_new_tokens: int
    # None: the product's own (KINDRED_TRAIN_MAX_STEPS, KINDRED_TRAIN_HELDOUT_SHARE), the default:
    # the proof is of what ships. A number overrides it, for a shorter or a different run.
    train_steps: int | None = None
    heldout_share: float | None = None

    @property
    def replies_per_day(self) -> int:
        return self.people * self.prompts_per_chat * self.candidates


FULL = Plan(
    nights=3, people=10, prompts_per_chat=4, candidates=8, eval_prompts=60, eval_samples=3,
    max_new_tokens=48,
)  # fmt: skip
QUICK = Plan(
    nights=1, people=8, prompts_per_chat=4, candidates=6, eval_prompts=40, eval_samples=3,
    max_new_tokens=48,
)  # fmt: skip


@dataclass(slots=True)
class Night:
    night: int
    served_rate: float
    candidate_rate: float | None
    promoted: bool
    status: str
    message: str
    examples: dict[str, Any] = field(default_factory=dict)
    gate: dict[str, Any] = field(default_factory=dict)
    minutes: dict[str, float] = field(default_factory=dict)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one night, fewer replies")
    for name in ("nights", "people", "candidates", "eval_prompts", "train_steps"):
        parser.add_argument("--" + name.replace("_", "-"), type=int, help=f"override the plan's {name}")
    parser.add_argument("--heldout-share", type=float, help="override the plan's heldout_share")
    parser.add_argument("--teacher", choices=("taste", "random"), default="taste")
    parser.add_argument("--taste", choices=sorted(TASTES), default="question")
    parser.add_argument("--noise", type=float, default=0.1, help="chance each training reaction is flipped")
    parser.add_argument(
        "--react-to-misses", type=float, default=0.25,
        help="share of the replies that miss the taste that get a 👎 (the rest: no reaction)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--model", default="bundled", help="KINDRED_MODEL: bundled, a folder or a Hub id")
    parser.add_argument("--data-dir", type=Path, help="keep the run's files here (default: a temp folder)")
    parser.add_argument("--plot", type=Path, help="write a PNG of the rates per night here")
    return parser.parse_args(argv)


def prompts(seed: int, count: int, avoid: Collection[str] = ()) -> list[str]:
    """`count` distinct everyday chat lines, none of them in `avoid`."""
    rng = random.Random(seed)
    found: list[str] = []
    seen = set(avoid)
    while len(found) < count:
        line = chatter_line(rng)
        if line not in seen:
            seen.add(line)
            found.append(line)
    return found


def rate(replies: Sequence[str], taste: Callable[[str], bool]) -> float:
    return sum(taste(r) for r in replies) / len(replies) if replies else 0.0


def binomial_se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-9) / n) if n else 0.0


def main(argv: Sequence[str] | None = None) -> None:
    exit_cleanly_on_sigterm()
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kindred-learning-sim-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        from bench.parts.learning.run import simulate

        result = asyncio.run(simulate(args, QUICK if args.quick else FULL, data_dir))
    if args.plot is not None:
        from bench.learning_plot import plot

        plot(result, args.plot)
    print(json.dumps(result, ensure_ascii=False))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
