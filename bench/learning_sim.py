"""Proof that Kindred learns: simulated people with a hidden taste react, the nightly job trains on
their reactions and puts its candidate on trial, and the candidate serves everyone only if people's
reactions to its own replies, on a canary day, show that it is better.

Everything runs through the product's own parts:
- a day: simulated people chat through `Conversation` (the real SQLite store, the MiniLM embedder
  and the bundled SmolLM2 on the local engine, sampling as shipped) and react through the real
  reaction path (`Conversation.handle_reaction`) with 👍 or 👎 (bench/parts/learning/people.py);
- a night: the real `kindred.training.nightly` job from the job registry's own definition. It
  trains what KINDRED_TRAIN_LEARNER says (`--learner`: a LoRA adapter, a reward model served with
  best of KINDRED_TRAIN_BEST_OF, or both as one variant), pre-screens it, registers it and, when
  something passed, starts a canary; it never promotes;
- the canary day: the conversation asks, per message, which variant answers (the canary answers
  half of the replies: KINDRED_TRAIN_CANARY_SHARE=0.5); at the end of the day every reply is
  settled (KINDRED_TRAIN_CANARY_SETTLE_MINUTES=0) and the real `kindred.learning.canary` job enters
  them all into the anytime-valid test, which promotes, stops for harm, or lets the canary expire
  (KINDRED_TRAIN_CANARY_MAX_DAYS is a moment, so a canary lives one day and each night gets its
  decision).

Day 0: the base model serves everyone. Night n trains on every day so far; day n is its canary
day. The quick plan's canary day has 480 replies: at a share of 0.5 the test then promotes a
candidate at 30 % against a base at 5 % on 88 % of days (bot/core/learning/canary_power.py; 420
replies give 80 %), and one no better than the base on 0.4 %.

A hidden taste can be checked in code (`TASTES`): by default a reply that ends with a question back
to the person, which the base model meets in only a few percent of replies. How the people react
(`--teacher taste|random|sycophant`) is in bench/parts/learning/teachers.py; every reaction given
is flipped with probability `--noise` (0.1).

The rates are measured on held-out lines that no simulated person ever sends, with no flips: the
share of replies that meet the taste, for the base model, for each night's candidate, and for what
serves after each canary day (bench/parts/learning/measure.py).

The same seed gives the same JSON but for `date`, `machine` and every field named `minutes` or
ending in `_s` or `_ms`: replies are sampled from (seed, message key), reactions from (seed, chat,
turn), training from KINDRED_TRAIN_SEED, torch's threads are fixed, and the chats run in lockstep
rounds so that the engine's batches and the store's turn ids are the same on every run
(bench/parts/learning/lockstep.py says why that matters).

Model extraction is off (it costs seconds per turn on a CPU and finds nothing with the default model).

    .venv/bin/python -m bench.learning_sim --quick                 # one night and its canary day
    .venv/bin/python -m bench.learning_sim --quick --learner rerank
    .venv/bin/python -m bench.learning_sim --quick --teacher sycophant
    .venv/bin/python -m bench.learning_sim --plot docs/learning_sim.png
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.parts.chatter import chatter_line
from bench.parts.common import exit_cleanly_on_sigterm

TARGET_POINTS = 20.0
QUICK_TARGET_POINTS = 5.0
TARGET_MINUTES = 60.0
# The issue's: one night and its canary day on 2 cores where training runs in bf16 (AMX or
# AVX512-BF16), and on a machine that trains in fp32 only.
QUICK_TARGET_MINUTES = 25.0
QUICK_TARGET_MINUTES_FP32 = 45.0
_SENTENCE_END = re.compile(r"[.!?…]['\")\]]*\s*$")


def asks_back(reply: str) -> bool:
    """The reply ends with a question back to the person (its last character is a "?")."""
    return reply.rstrip().rstrip("\"')]").endswith("?")


def short_and_finished(reply: str) -> bool:
    """At most 25 words, and the last sentence is finished."""
    return len(reply.split()) <= 25 and bool(_SENTENCE_END.search(reply))


TASTES: dict[str, Callable[[str], bool]] = {"question": asks_back, "short": short_and_finished}
LEARNERS = ("lora", "rerank", "both")


@dataclass(frozen=True, slots=True)
class Plan:
    nights: int
    people: int  # on day 0, before the first night
    canary_people: int  # on each day after a night (a canary day when the night started one)
    prompts_per_chat: int  # each candidate chat holds this many prompts, one after the other
    candidates: int  # chats per person answering the same prompts
    eval_prompts: int
    eval_samples: int
    max_new_tokens: int
    # None: the product's own (KINDRED_TRAIN_MAX_STEPS, KINDRED_TRAIN_HELDOUT_SHARE), the default:
    # the proof is of what ships. A number overrides it, for a shorter or a different run.
    train_steps: int | None = None
    heldout_share: float | None = None

    def replies_on(self, day: int) -> int:
        people = self.people if day == 0 else self.canary_people
        return people * self.prompts_per_chat * self.candidates


# A canary day of 480 replies (15 or 20 people, at most 16 or 12 a day in each arm on average,
# below the product's cap of 20 per person per arm): see the module docstring for its power.
FULL = Plan(
    nights=3, people=10, canary_people=15, prompts_per_chat=4, candidates=8, eval_prompts=60,
    eval_samples=3, max_new_tokens=48,
)  # fmt: skip
QUICK = Plan(
    nights=1, people=8, canary_people=20, prompts_per_chat=4, candidates=6, eval_prompts=40,
    eval_samples=3, max_new_tokens=48,
)  # fmt: skip


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one night and its canary day")
    for name in ("nights", "people", "canary_people", "candidates", "eval_prompts", "train_steps"):
        parser.add_argument("--" + name.replace("_", "-"), type=int, help=f"override the plan's {name}")
    parser.add_argument("--heldout-share", type=float, help="override the plan's heldout_share")
    parser.add_argument("--teacher", choices=("taste", "random", "sycophant"), default="taste")
    parser.add_argument("--taste", choices=sorted(TASTES), default="question")
    parser.add_argument("--learner", choices=LEARNERS, default="both", help="KINDRED_TRAIN_LEARNER")
    parser.add_argument(
        "--best-of", type=int, default=4,
        help="KINDRED_TRAIN_BEST_OF: candidates a reward model chooses among",
    )  # fmt: skip
    parser.add_argument("--noise", type=float, default=0.1, help="chance each reaction is flipped")
    parser.add_argument(
        "--react-to-misses", type=float, default=0.25,
        help="share of the replies that miss the taste that get a 👎 (the rest: no reaction)",
    )  # fmt: skip
    parser.add_argument(
        "--claim-share", type=float, default=0.3, help="the sycophant's messages that are false claims"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threads", type=int, help="torch's CPU threads (default: every core)")
    parser.add_argument("--model", default="bundled", help="KINDRED_MODEL: bundled, a folder or a Hub id")
    parser.add_argument("--data-dir", type=Path, help="keep the run's files here (default: a temp folder)")
    parser.add_argument("--plot", type=Path, help="write a PNG of the rates per day here")
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
