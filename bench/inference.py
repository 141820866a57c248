"""Local inference benchmark: tokens/s and time to first token at 1, 8 and 32 concurrent chats, and
the engine against plain `model.generate` on the same model in the same run (`engine_vs_generate`).

Each level runs that many clients at once; each client sends its requests one after another
(a closed loop, like people waiting for their reply before writing again), so the engine sees
`concurrency` requests arriving together and batches them. Decoding is greedy and every request
asks for the same max_tokens, so levels differ only in how many rows share a batch. Tokens are
the reply re-tokenized (`count_tokens`). Prints one JSON object on stdout; progress goes to stderr.

With `--best-of-n`, it measures best-of-n's cost instead (`parts/inference/best_of_n.py`): first
byte and whole reply for n = 1, 2, 4 and 8 candidates, sampled as the bot samples them, p50 over
prompts, against the issue's target (n = 4 at most 1.5 times n = 1, whole).

    .venv/bin/python -m bench.inference --quick
    .venv/bin/python -m bench.inference --model /path/to/model --device cuda --concurrency 1,32
    .venv/bin/python -m bench.inference --best-of-n --quick
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.parts.common import exit_cleanly_on_sigterm, log, machine, millis, now_iso
from bench.parts.inference import best_of_n, engine_vs_generate
from bot.core.models import ChatMessage
from bot.inference.engine.local import LocalInference, Sampling

DEFAULT_LEVELS = (1, 8, 32)
TARGET_SPEEDUP_AT_8 = 3.0
PROMPTS = (
    "Hi! How was your day?",
    "I just got back from a long run by the river and my legs are tired.",
    "Can you remind me what I said about my sister's wedding?",
    "What should I cook tonight with rice, spinach and two eggs?",
    "I'm nervous about my job interview tomorrow morning.",
    "Tell me something nice about autumn.",
    "My cat knocked a glass off the table again.",
    "Do you think I should learn the piano or the guitar first?",
    "I finished the book you suggested. The ending surprised me.",
    "How do I say thank you politely in Japanese?",
    "I can't sleep. Talk to me for a bit?",
    "We adopted a puppy today! Any name ideas?",
)


@dataclass(slots=True)
class Level:
    """What one concurrency level measured."""

    ttft: list[float] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)
    tokens: int = 0
    wall_s: float = 0.0


def add_engine_args(parser: argparse.ArgumentParser) -> None:
    """The options `load_engine` reads: which model, where it is converted, the device, threads, dtype."""
    parser.add_argument(
        "--model", default="bundled", help="bundled (SmolLM2-135M), a model directory or a Hub id"
    )
    parser.add_argument(
        "--data-dir", type=Path, help="where the bundled model is converted (default: a temp dir)"
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: half the CPUs)")
    parser.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"))
    parser.add_argument(
        "--engine",
        default="auto",
        choices=("auto", "llama", "transformers"),
        help="auto: what Kindred runs (the plain Llama engine where it can, else transformers)",
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_engine_args(parser)
    parser.add_argument("--concurrency", help="levels, comma-separated (default 1,8,32)")
    parser.add_argument("--max-tokens", type=int, help="tokens per reply (default 64; --quick 12)")
    parser.add_argument("--rounds", type=int, help="requests per client at each level (default 2; --quick 1)")
    parser.add_argument(
        "--random-weights", action="store_true", help="config.json only: speed without the weights"
    )
    parser.add_argument(
        "--vs-generate",
        type=int,
        help="prompts answered by both the engine and plain generate (default 6; --quick 2; 0: none)",
    )
    parser.add_argument("--quick", action="store_true", help="short replies, one round: a smoke run")
    parser.add_argument("--best-of-n", action="store_true", help="measure best-of-n's cost instead")
    parser.add_argument("--n", help="best-of-n: candidates, comma-separated (default 1,2,4,8)")
    parser.add_argument("--prompts", type=int, help="best-of-n: prompts (default 8; --quick 3)")
    return parser.parse_args(argv)


async def one_request(engine: LocalInference, prompt: str, max_tokens: int, level: Level) -> None:
    started = time.perf_counter()
    first: float | None = None
    parts: list[str] = []
    async for chunk in engine.stream([ChatMessage("user", prompt)], max_tokens=max_tokens):
        if first is None:
            first = time.perf_counter() - started
        parts.append(chunk)
    level.latency.append(time.perf_counter() - started)
    if first is not None:
        level.ttft.append(first)
    level.tokens += engine.count_tokens("".join(parts))


async def run_level(engine: LocalInference, concurrency: int, rounds: int, max_tokens: int) -> Level:
    level = Level()

    async def client(index: int) -> None:
        for r in range(rounds):
            await one_request(engine, PROMPTS[(index + r) % len(PROMPTS)], max_tokens, level)

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(concurrency)))
    level.wall_s = time.perf_counter() - started
    return level


def summary(level: Level, concurrency: int) -> dict[str, Any]:
    return {
        "concurrency": concurrency,
        "requests": len(level.latency),
        "tokens": level.tokens,
        "wall_s": round(level.wall_s, 3),
        "tokens_per_s": round(level.tokens / level.wall_s, 2) if level.wall_s else 0.0,
        "time_to_first_token": millis(level.ttft),
        "request_latency": millis(level.latency),
    }


def load_engine(args: argparse.Namespace, levels: Sequence[int], data_dir: Path) -> LocalInference:
    """The engine under test. `--random-weights` builds a transformers model from its config.json
    alone: the same shapes and so the same speed, without carrying the weights (text is noise,
    and replies always run to max_tokens because such a model rarely ends one). The plain Llama
    engine runs the trained weights in their own dtype; `--engine auto` takes it where Kindred
    would, unless `--random-weights` or `--dtype` asks for what only transformers does here."""
    from bot.inference.engine.threads import limit_torch_threads
    from bot.inference.model_files import prepare_model

    limit_torch_threads(args.threads)
    model_dir = str(prepare_model(args.model, data_dir))
    as_kindred = not args.random_weights and args.dtype == "auto"
    if args.engine == "llama" or (args.engine == "auto" and as_kindred):
        return LocalInference.load(
            model_dir,
            device=args.device,
            timeout_s=3600.0,
            sampling=Sampling(temperature=0.0),
            max_batch=max(levels),
            threads=args.threads,
            engine=args.engine,
        )
    model, tokenizer = transformers_model(args, model_dir)
    return LocalInference(
        model,
        tokenizer,
        device=args.device,
        timeout_s=3600.0,
        sampling=Sampling(temperature=0.0),
        max_batch=max(levels),
    )


def transformers_model(args: argparse.Namespace, model_dir: str) -> tuple[Any, Any]:
    """The transformers model and tokenizer that `--dtype` and `--random-weights` describe."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    dtype = "auto" if args.dtype == "auto" else getattr(torch, args.dtype)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if args.random_weights:
        torch.manual_seed(0)
        config = AutoConfig.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_config(config, dtype=None if dtype == "auto" else dtype)  # type: ignore[no-untyped-call]
    else:
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype)
    model.to(torch.device(args.device))
    model.eval()
    return model, tokenizer


def facts(engine: LocalInference, args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import transformers

    found: dict[str, Any] = {
        "model": args.model,
        "device": args.device,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "torch_threads": torch.get_num_threads(),
        "max_batch": engine.max_batch,
        "decoding": "greedy",
        "engine": engine.engine,
        "dtype": str(engine.dtype).removeprefix("torch."),
        "weights": "random (config.json only)" if args.random_weights else "trained",
    }
    if args.device.startswith("cuda") and torch.cuda.is_available():
        found["gpu"] = torch.cuda.get_device_name(0)
    return found


async def run_best_of_n(args: argparse.Namespace) -> dict[str, Any]:
    ns = [int(x) for x in args.n.split(",")] if args.n else [1, 2, 4, 8]
    max_tokens = args.max_tokens or (48 if args.quick else 128)
    count = args.prompts or (3 if args.quick else 8)
    report: dict[str, Any] = {"date": now_iso(), "machine": machine(), "benchmark": "best_of_n"}
    data_dir = args.data_dir or Path(os.environ.get("TMPDIR", "/tmp")) / "kindred-bench-models"
    log(f"loading {args.model} on {args.device}")
    engine = load_engine(args, ns, data_dir)
    engine.sampling = Sampling()  # as the bot samples: candidates must differ
    settings = {**facts(engine, args), "decoding": "sampled, seeded per prompt", "max_tokens": max_tokens}
    report["settings"] = {**settings, "prompts": count, "n": ns, "cpu_bf16": best_of_n.cpu_flags()}
    try:
        levels = await best_of_n.measure(engine, ns, count, max_tokens)
    finally:
        await engine.close()
    report["results"], report["checks"] = best_of_n.summary(levels)
    log(f"  checks: {json.dumps(report['checks'])}")
    return report


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.best_of_n:
        return await run_best_of_n(args)
    levels = [int(x) for x in args.concurrency.split(",")] if args.concurrency else list(DEFAULT_LEVELS)
    max_tokens = args.max_tokens or (12 if args.quick else 64)
    rounds = args.rounds or (1 if args.quick else 2)
    report: dict[str, Any] = {"date": now_iso(), "machine": machine(), "benchmark": "inference"}
    data_dir = args.data_dir or Path(os.environ.get("TMPDIR", "/tmp")) / "kindred-bench-models"
    log(f"loading {args.model} on {args.device}")
    engine = load_engine(args, levels, data_dir)
    report["settings"] = {**facts(engine, args), "max_tokens": max_tokens, "rounds": rounds, "levels": levels}
    results: dict[str, Any] = {}
    vs_generate: dict[str, Any] | None = None
    try:
        await run_level(engine, 1, 1, 4)  # warm-up: first-call allocations and kernels
        for concurrency in levels:
            log(f"concurrency {concurrency}: {concurrency * rounds} requests of {max_tokens} tokens")
            level = await run_level(engine, concurrency, rounds, max_tokens)
            results[str(concurrency)] = summary(level, concurrency)
            log(f"  {results[str(concurrency)]['tokens_per_s']} tokens/s")
        pairs = args.vs_generate if args.vs_generate is not None else (2 if args.quick else 6)
        if pairs > 0:
            vs_generate = await compare_with_generate(engine, args, data_dir, pairs, max_tokens)
    finally:
        await engine.close()  # the generation thread must end before the interpreter does
    report["results"] = results
    report["checks"] = checks(results)
    if vs_generate is not None:
        report["engine_vs_generate"] = vs_generate
        report["checks"]["engine_vs_generate"] = vs_generate["check"]
    return report


async def compare_with_generate(
    engine: LocalInference, args: argparse.Namespace, data_dir: Path, pairs: int, max_tokens: int
) -> dict[str, Any]:
    """Plain transformers generate on the same weights: the engine's own model when it is a
    transformers one, else the same directory loaded by transformers."""
    log(f"engine vs plain generate: {pairs} prompts of {max_tokens} tokens, one chat at a time")
    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(pairs)]
    if engine.engine == "transformers":
        model, tokenizer = engine._model, engine._tokenizer
    else:
        from bot.inference.model_files import prepare_model

        model, tokenizer = transformers_model(args, str(prepare_model(args.model, data_dir)))
    compared = await engine_vs_generate.compare(engine, model, tokenizer, prompts, max_tokens)
    found = engine_vs_generate.summary(compared, max_tokens)
    log(
        f"  engine/generate {found['engine_vs_generate']} (generate {found['generate_tokens_per_s']}"
        f" tokens/s, engine {found['engine_tokens_per_s']})"
    )
    return found


def checks(results: dict[str, Any]) -> dict[str, Any]:
    """Throughput at each level against one request at a time; the issue's target is at 8."""
    if "1" not in results:
        return {}
    base = results["1"]["tokens_per_s"] or float("nan")
    found: dict[str, Any] = {}
    for key, result in results.items():
        if key != "1":
            found[f"speedup_at_{key}"] = round(result["tokens_per_s"] / base, 2)
    if "8" in results:
        speedup = found["speedup_at_8"]
        found["target_at_8"] = {
            "target": TARGET_SPEEDUP_AT_8,
            "value": speedup,
            "pass": speedup >= TARGET_SPEEDUP_AT_8,
        }
    return found


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    exit_cleanly_on_sigterm()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
