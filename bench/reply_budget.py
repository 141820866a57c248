"""Reply budget: how often a reply is cut at each token budget, what whole sentences take away,
and how long a reply takes, to choose `KINDRED_MAX_NEW_TOKENS` ([first-run]).

Each prompt goes through the local engine once, greedy (or sampled with one seed a prompt), with
the largest budget and the product's persona (`core/chat/prompt.py`). Either way the reply at a smaller
budget b is the first b tokens of that one, so every budget is read off one generation: the reply
is cut when it has b tokens or more (the conversation's own rule, `Generation.cut`), and a cut one
is trimmed with `core/chat/sentences.py: whole_sentences`, as it would be shown. The time of a
reply at budget b is when its b-th token arrived (or its end, if it ended first). Prints one JSON
object on stdout; progress goes to stderr.

    .venv/bin/python -m bench.reply_budget
    .venv/bin/python -m bench.reply_budget --quick
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.inference import add_engine_args, facts, load_engine
from bench.parts.common import exit_cleanly_on_sigterm, log, machine, millis, now_iso
from bot.core.chat.prompt import DEFAULT_PERSONA, build_messages
from bot.core.chat.sentences import ELLIPSIS, whole_sentences
from bot.inference.engine.local import LocalInference, Sampling

DEFAULT_BUDGETS = (64, 96, 128, 160, 192)
QUICK_BUDGETS = (8, 16)
# Everyday companion talk, short questions and ones that invite a longer answer, in one fixed set.
PROMPTS = (
    "Hi! How was your day?",
    "I just got back from a long run by the river and my legs are tired.",
    "What should I cook tonight with rice, spinach and two eggs?",
    "I'm nervous about my job interview tomorrow morning.",
    "Tell me something nice about autumn.",
    "My cat knocked a glass off the table again.",
    "Do you think I should learn the piano or the guitar first?",
    "I finished the book you suggested. The ending surprised me.",
    "How do I say thank you politely in Japanese?",
    "I can't sleep. Talk to me for a bit?",
    "We adopted a puppy today! Any name ideas?",
    "Can you explain how a rainbow forms?",
    "Give me three tips for a rainy weekend at home.",
    "What's a good way to start journaling?",
    "I had a fight with my best friend and I feel awful.",
    "Tell me a very short story about a lighthouse keeper.",
    "Is it better to drink coffee before or after breakfast?",
    "I want to save money this month. Where do I start?",
    "What was the most interesting thing you learned today?",
    "Thanks for listening yesterday, it really helped.",
)
# "Cuts rarely": at most this share of replies stopped by the budget.
RARE_CUT_SHARE = 0.1
# Failing that, a cut reply shown as whole sentences loses at most this share of what was written.
MAX_REMOVED_SHARE = 0.1


@dataclass(frozen=True, slots=True)
class Written:
    """One prompt's reply at the largest budget: its text, its tokens, when each token arrived."""

    ids: list[int]
    token_times_s: list[float]
    total_s: float


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_engine_args(parser)
    parser.add_argument("--budgets", help="token budgets, comma-separated (default 64,96,128,160,192)")
    parser.add_argument("--prompts", type=int, help=f"how many of the {len(PROMPTS)} prompts (default all)")
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.0,
        help="0: greedy (default); the product samples at 0.7 (seeded here, one seed a prompt)",
    )
    parser.add_argument("--quick", action="store_true", help="three prompts, budgets 8 and 16: a smoke run")
    args = parser.parse_args(argv)
    args.random_weights = False  # bench.inference's loader asks; a budget needs real replies
    return args


async def write(engine: LocalInference, prompt: str, budget: int) -> Written:
    """The reply to `prompt` at `budget` tokens, as the conversation would ask for it."""
    messages = build_messages(
        DEFAULT_PERSONA,
        [],
        [],
        prompt,
        budget_tokens=engine.context_window - budget,
        count_tokens=engine.count_tokens,
    )
    tokenizer = engine._tokenizer
    started = time.perf_counter()
    text, times = "", list[float]()
    async for chunk in engine.stream(messages, max_tokens=budget):
        text += chunk
        # A chunk may carry several tokens; each is stamped with the time its chunk arrived.
        arrived = time.perf_counter() - started
        times.extend([arrived] * (engine.count_tokens(text) - len(times)))
    total = time.perf_counter() - started
    ids = [int(i) for i in tokenizer.encode(text, add_special_tokens=False)]
    return Written(ids, times[: len(ids)], total)


def at_budget(engine: LocalInference, written: Written, budget: int) -> dict[str, Any]:
    """The reply as the person would get it at `budget`: cut or not, trimmed or not, and when."""
    tokenizer = engine._tokenizer
    text = tokenizer.decode(written.ids[:budget], skip_special_tokens=True).strip()
    cut = len(written.ids) >= budget  # it had not ended by then: stopped by the budget
    shown = whole_sentences(text) if cut else text
    seconds = (
        written.token_times_s[budget - 1] if cut and len(written.token_times_s) >= budget else written.total_s
    )
    return {
        "cut": cut,
        "chars": len(text),
        "removed_chars": len(text) - len(shown.removesuffix(ELLIPSIS)) if cut else 0,
        "nothing_complete": cut and shown.endswith(ELLIPSIS) and not text.endswith(ELLIPSIS),
        "seconds": seconds,
        "shown": shown,
    }


def summary(replies: Sequence[dict[str, Any]]) -> dict[str, Any]:
    cut = [r for r in replies if r["cut"]]
    removed = sum(r["removed_chars"] for r in cut)
    return {
        "replies": len(replies),
        "cut": len(cut),
        "cut_share": round(len(cut) / len(replies), 3),
        "nothing_complete": sum(1 for r in cut if r["nothing_complete"]),
        # Of the text the cut replies had, the share that trimming to whole sentences took away.
        "removed_share_of_cut_text": round(removed / max(1, sum(r["chars"] for r in cut)), 3),
        "removed_chars_median": statistics.median([r["removed_chars"] for r in cut]) if cut else 0,
        "reply_time": millis([r["seconds"] for r in replies]),
        "reply_chars_median": statistics.median([len(r["shown"]) for r in replies]),
    }


def choose(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The smallest budget that cuts rarely; failing that (a small model rambles on), the smallest
    whose cut replies lose little to trimming. A reply's time grows with its budget, so the
    smallest that qualifies is also the fastest."""

    def smallest(passes: Callable[[dict[str, Any]], bool]) -> int | None:
        return min((int(b) for b, r in results.items() if passes(r)), default=None)

    rarely = smallest(lambda r: r["cut_share"] <= RARE_CUT_SHARE)
    keeps = smallest(lambda r: r["removed_share_of_cut_text"] <= MAX_REMOVED_SHARE)
    return {
        "cuts_rarely": {"rule": f"cut_share <= {RARE_CUT_SHARE}", "budget": rarely},
        "trimming_keeps_most": {"rule": f"removed_share_of_cut_text <= {MAX_REMOVED_SHARE}", "budget": keeps},
        "budget": rarely if rarely is not None else keeps,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    budgets = sorted(
        int(b)
        for b in (
            args.budgets.split(",") if args.budgets else QUICK_BUDGETS if args.quick else DEFAULT_BUDGETS
        )
    )
    prompts = PROMPTS[: args.prompts or (3 if args.quick else len(PROMPTS))]
    report: dict[str, Any] = {"date": now_iso(), "machine": machine(), "benchmark": "reply_budget"}
    data_dir = args.data_dir or Path(os.environ.get("TMPDIR", "/tmp")) / "kindred-bench-models"
    log(f"loading {args.model} on {args.device}")
    import torch

    engine = load_engine(args, [1], data_dir)
    engine.sampling = Sampling(temperature=args.temperature)
    report["settings"] = {
        **facts(engine, args),
        "decoding": "greedy" if args.temperature == 0 else f"sampled at temperature {args.temperature:g}",
        "budgets": budgets,
        "prompts": len(prompts),
        "persona": "default",
        "timing": "on whatever else this machine runs at the same time; cut rates do not depend on it",
    }
    written: list[Written] = []
    try:
        await write(engine, "Hello", 4)  # warm-up: first-call allocations and kernels
        for n, prompt in enumerate(prompts, 1):
            # Sampled tokens before step b do not depend on the budget, so with one seed a prompt
            # the prefix rule holds for sampling as for greedy decoding.
            torch.manual_seed(n)
            written.append(await write(engine, prompt, budgets[-1]))
            log(f"prompt {n}/{len(prompts)}: {len(written[-1].ids)} tokens in {written[-1].total_s:.1f} s")
    finally:
        await engine.close()  # the generation thread must end before the interpreter does
    replies = {b: [at_budget(engine, w, b) for w in written] for b in budgets}
    report["examples"] = {str(b): [r["shown"] for r in replies[b][:3]] for b in budgets}
    report["results"] = {str(b): summary(replies[b]) for b in budgets}
    report["choice"] = choose(report["results"])
    return report


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    exit_cleanly_on_sigterm()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    print(json.dumps(asyncio.run(run(args)), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
