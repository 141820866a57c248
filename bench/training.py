"""Nightly training benchmark: one KTO + LoRA run as the night runs it, and the gate after it.

The examples look like the night's: Kindred's persona, a few recent turns and the message, and
a reply of ~40–60 tokens; half end with a question back to the person (desirable), half do not.
The run trains from the base (bot/training, TRL's KTOTrainer), then, with --score, runs the
evaluation gate on held-out examples of the same taste. Tokens/s counts the trained batches'
tokens (prompt and completion, as TRL counts them), not the reference's or the KL's forwards.
Prints one JSON object on stdout; progress goes to stderr.

    .venv/bin/python -m bench.training --quick
    .venv/bin/python -m bench.training --model /path/to/model --device cuda --score
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.parts.common import exit_cleanly_on_sigterm, log, machine, now_iso
from bot.core.chat.prompt import DEFAULT_PERSONA
from bot.core.learning.gate import GatePolicy, evaluate_candidate
from bot.core.learning.models import TrainingExample
from bot.core.models import ChatMessage, JSONObject
from bot.training import LoraKtoTrainer, LoraScorer, TrainingOptions

TURNS = (
    ("I went to the farmers market this morning.", "Nice! Did you find anything good?"),
    ("My sister called, she is moving to Lisbon.", "That's big news. How do you feel about it?"),
    ("Work was slow today, lots of meetings.", "Meetings can drain a day. Did any of them help?"),
    ("I started reading a novel about a lighthouse keeper.", "That sounds atmospheric. Is it gripping?"),
    ("We had pasta with fresh basil for dinner.", "Fresh basil makes all the difference. Yum."),
    ("I'm trying to walk ten thousand steps a day.", "Great goal! How close are you getting?"),
)
MESSAGES = (
    "I finally fixed the leaking tap in the kitchen, it took me all afternoon.",
    "The neighbours' dog barked all night and I barely slept.",
    "I'm thinking of taking a pottery class on Thursdays.",
    "My daughter drew a picture of our family today, it made me smile.",
    "I can't decide whether to repaint the living room green or blue.",
    "We're planning a weekend trip to the mountains next month.",
    "I burned the rice again, I always forget the timer.",
    "My friend Sam got engaged last night!",
)
BODIES = (
    "That sounds like a real accomplishment, and it must feel good to see it done after all that effort",
    "Oh, that sounds exhausting, nights like that make the next day feel twice as long",
    "What a lovely idea, working with clay can be calming and it gives you something to look forward to",
    "That's so sweet, little moments like that are worth keeping close",
    "Both sound lovely, green feels calm and fresh while blue can make a room feel open and cool",
    "How exciting, the mountains are a wonderful place to breathe and slow down for a while",
    "That happens to the best of us, rice is sneaky and it burns the moment you look away",
    "That's wonderful news, you must be so happy for them both",
)
QUESTIONS = ("What made you decide on it?", "How are you feeling about it now?", "What happens next?")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--model", default="bundled", help="bundled (SmolLM2-135M) or a model directory")
    parser.add_argument(
        "--data-dir", type=Path, help="where the bundled model is converted (default: a temp dir)"
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--steps", type=int, help="optimizer steps (default 20; --quick 2)")
    parser.add_argument("--batch", type=int, help="examples per step (default 8; --quick 4)")
    parser.add_argument("--max-length", type=int, help="tokens per example (default 256; --quick 128)")
    parser.add_argument("--examples", type=int, help="training examples (default 64; --quick 8)")
    parser.add_argument("--learning-rate", type=float, help="default: TrainingOptions' own")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's own)")
    parser.add_argument("--score", action="store_true", help="run the evaluation gate on the new adapter")
    parser.add_argument(
        "--gpu-util", action="store_true", help="sample the GPU's utilisation (nvidia-smi) while it trains"
    )
    parser.add_argument(
        "--random-weights", action="store_true", help="config.json only: speed without the weights"
    )
    parser.add_argument("--quick", action="store_true", help="a few tiny steps: a smoke run")
    return parser.parse_args(argv)


def examples(start: int, n: int) -> list[TrainingExample]:
    """`n` examples of the question-back taste, alternating desirable and undesirable."""
    found = []
    for i in range(start, start + n):
        recent = [TURNS[(i + k) % len(TURNS)] for k in range(1 + i % 3)]
        prompt = [ChatMessage("system", DEFAULT_PERSONA)]
        for said, answered in recent:
            prompt += [ChatMessage("user", said), ChatMessage("assistant", answered)]
        prompt.append(ChatMessage("user", MESSAGES[i % len(MESSAGES)]))
        body = BODIES[i % len(BODIES)]
        asks = i % 2 == 0
        reply = f"{body}. {QUESTIONS[i % len(QUESTIONS)]}" if asks else f"{body}. Take care of yourself."
        found.append(TrainingExample(i, tuple(prompt), reply, asks))
    return found


def base_model(args: argparse.Namespace, scratch: Path) -> str:
    """The model directory to train from; with --random-weights, one built from its config."""
    from bot.inference.model_files import prepare_model

    data_dir = args.data_dir or Path(os.environ.get("TMPDIR", "/tmp")) / "kindred-bench-models"
    model_dir = prepare_model(args.model, data_dir)
    if not args.random_weights:
        return str(model_dir)
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(str(model_dir)))
    model.save_pretrained(str(scratch / "random"))
    AutoTokenizer.from_pretrained(str(model_dir)).save_pretrained(str(scratch / "random"))
    return str(scratch / "random")


def options(args: argparse.Namespace, model: str) -> TrainingOptions:
    quick = args.quick
    opts = TrainingOptions(
        model,
        max_steps=args.steps or (2 if quick else 20),
        batch_size=args.batch or (4 if quick else 8),
        max_length=args.max_length or (128 if quick else 256),
        device=args.device,
    )
    return opts if args.learning_rate is None else replace(opts, learning_rate=args.learning_rate)


def score(opts: TrainingOptions, adapter: Path, heldout: list[TrainingExample]) -> JSONObject:
    started = time.monotonic()
    report = evaluate_candidate(LoraScorer(opts), adapter, None, heldout, GatePolicy())
    return {"seconds": round(time.monotonic() - started, 2), **report.as_json()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    report: dict[str, Any] = {"date": now_iso(), "machine": machine(), "benchmark": "training"}
    with tempfile.TemporaryDirectory(prefix="kindred-bench-train-") as tmp:
        scratch = Path(tmp)
        opts = options(args, base_model(args, scratch))
        n = args.examples or (8 if args.quick else 64)
        report["settings"] = {**facts(opts), "examples": n, "random_weights": args.random_weights}
        log(f"training {opts.max_steps} steps of {opts.batch_size} (length {opts.max_length}), {opts.device}")
        steps: list[JSONObject] = []
        stamps: list[float] = []

        def progress(record: JSONObject) -> None:
            steps.append(record)
            stamps.append(time.monotonic())
            log(f"  step {record['step']}: loss {record['loss']:.4f}, {record['examples_per_s']:.2f} ex/s")

        started = time.monotonic()
        with GpuSampler(args.gpu_util) as sampler:
            metrics = LoraKtoTrainer(opts).train(examples(0, n), scratch / "adapter", progress)
        report["results"] = {"wall_s": round(time.monotonic() - started, 2), **metrics, "steps_log": steps}
        if args.gpu_util:
            # Between the first and the last logged step: training only, not loading the model.
            report["results"]["gpu_utilisation"] = sampler.summary(stamps[0], stamps[-1]) if stamps else None
        if args.score:
            log("scoring the adapter: held-out margin, regression set, sycophancy probes")
            report["gate"] = score(opts, scratch / "adapter", examples(1000, max(n // 4, 16)))
    return report


class GpuSampler:
    """nvidia-smi's utilisation of GPU 0, sampled every 200 ms in its own process, time-stamped
    here as each line arrives. Samples nothing where there is no nvidia-smi."""

    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled and shutil.which("nvidia-smi") is not None
        self._samples: list[tuple[float, float]] = []
        self._process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    def __enter__(self) -> GpuSampler:
        if self._enabled:
            query = ["nvidia-smi", "-i", "0", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"]
            self._process = subprocess.Popen([*query, "-lms", "200"], stdout=subprocess.PIPE, text=True)
            self._reader = threading.Thread(target=self._read, daemon=True)
            self._reader.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
        if self._reader is not None:
            self._reader.join(timeout=10)

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            try:
                self._samples.append((time.monotonic(), float(line.strip())))
            except ValueError:
                continue  # "[N/A]" on a GPU that does not report it

    def summary(self, start: float, end: float) -> dict[str, Any] | None:
        values = [v for t, v in self._samples if start <= t <= end]
        if not values:
            return None
        ordered = sorted(values)
        return {
            "mean": round(sum(values) / len(values), 1),
            "p50": ordered[len(ordered) // 2],
            "max": ordered[-1],
            "samples": len(values),
        }


def facts(opts: TrainingOptions) -> dict[str, Any]:
    import peft
    import torch
    import transformers
    import trl

    from bot.training.options import resolve_device, use_bf16

    device = resolve_device(opts.device)
    found: dict[str, Any] = {
        "model": opts.base_model,
        "device": device,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "trl": trl.__version__,
        "peft": peft.__version__,
        "torch_threads": torch.get_num_threads(),
        "steps": opts.max_steps,
        "batch_size": opts.batch_size,
        "max_length": opts.max_length,
        "learning_rate": opts.learning_rate,
        "lora_rank": opts.lora_rank,
        "bf16": use_bf16(opts.bf16, device),
    }
    if device == "cuda":
        found["gpu"] = torch.cuda.get_device_name(0)
    return found


def main(argv: Sequence[str] | None = None) -> None:
    exit_cleanly_on_sigterm()
    print(json.dumps(run(parse_args(argv)), indent=2))


if __name__ == "__main__":
    main()
