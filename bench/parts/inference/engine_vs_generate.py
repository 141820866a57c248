"""The local engine against plain `model.generate`: one chat at a time, the same model, the same run.

Each prompt is answered by both, back to back, and the order flips on every pair (A B, B A, …), so
that a neighbour's burst of load falls on both sides alike. Both decode greedily with the engine's
repetition penalty, render the prompt with the same chat template, stop at the same max_tokens and
use the same torch threads. Each side's time runs from the call to its last token, so the prompt's
prefill is in both. Tokens are each reply's text re-tokenized (`count_tokens`), the same rule for
both; `same_text` says whether the two replies were identical, as greedy decoding should make them.

Plain generate runs on a thread of its own, started per call as the engine starts its own. Under
load, OpenMP in the main thread behaved very differently from a fresh thread (at two torch threads
on a busy 2-core box, 0.3 against 3.3 tokens/s), and that would measure the thread, not the engine.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.parts.common import log
from bot.core.models import ChatMessage
from bot.inference.engine.local import LocalInference

# The target: the engine within 10 % of plain generate.
TARGET_RATIO = 0.9


@dataclass(slots=True)
class Side:
    """What one side measured over every prompt."""

    tokens: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0


@dataclass(slots=True)
class Comparison:
    generate: Side = field(default_factory=Side)
    engine: Side = field(default_factory=Side)
    pair_ratios: list[float] = field(default_factory=list)
    same_text: int = 0


def plain_generate(model: Any, tokenizer: Any, prompt: str, max_tokens: int, penalty: float) -> str:
    """One reply as a script would write it with transformers alone, on a fresh thread."""
    import torch

    found: list[str] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
            )
            ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")
            pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
            with torch.inference_mode():
                out = model.generate(
                    **ids.to(model.device),
                    max_new_tokens=max_tokens,
                    do_sample=False,
                    repetition_penalty=penalty,
                    pad_token_id=pad,
                )
            found.append(tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True))
        except BaseException as exc:  # re-raised on the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=work, name="bench-plain-generate")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return found[0]


async def engine_reply(engine: LocalInference, prompt: str, max_tokens: int) -> str:
    parts = [chunk async for chunk in engine.stream([ChatMessage("user", prompt)], max_tokens=max_tokens)]
    return "".join(parts)


async def compare(
    engine: LocalInference, model: Any, tokenizer: Any, prompts: Sequence[str], max_tokens: int
) -> Comparison:
    """Both sides on every prompt, alternating which goes first."""
    result = Comparison()
    penalty = engine.sampling.repetition_penalty
    for index, prompt in enumerate(prompts):
        texts: dict[str, str] = {}
        seconds: dict[str, float] = {}
        for side in ("generate", "engine") if index % 2 == 0 else ("engine", "generate"):
            started = time.perf_counter()
            if side == "generate":
                texts[side] = plain_generate(model, tokenizer, prompt, max_tokens, penalty)
            else:
                texts[side] = await engine_reply(engine, prompt, max_tokens)
            seconds[side] = time.perf_counter() - started
        tokens = {side: engine.count_tokens(text) for side, text in texts.items()}
        result.generate.tokens += tokens["generate"]
        result.generate.seconds += seconds["generate"]
        result.engine.tokens += tokens["engine"]
        result.engine.seconds += seconds["engine"]
        result.same_text += texts["generate"] == texts["engine"]
        if tokens["generate"] and tokens["engine"]:
            pair = (tokens["engine"] / seconds["engine"]) / (tokens["generate"] / seconds["generate"])
            result.pair_ratios.append(pair)
            log(f"  pair {index + 1}/{len(prompts)}: engine/generate {pair:.3f}")
    return result


def summary(result: Comparison, max_tokens: int) -> dict[str, Any]:
    """The JSON the benchmark reports, with the check against the issue's target."""
    ratio = result.engine.tokens_per_s / result.generate.tokens_per_s if result.generate.tokens_per_s else 0.0
    return {
        "pairs": len(result.pair_ratios),
        "max_tokens": max_tokens,
        "generate_tokens_per_s": round(result.generate.tokens_per_s, 2),
        "engine_tokens_per_s": round(result.engine.tokens_per_s, 2),
        "engine_vs_generate": round(ratio, 3),
        "pair_ratio_median": round(statistics.median(result.pair_ratios), 3) if result.pair_ratios else 0.0,
        "pair_ratio_min": round(min(result.pair_ratios), 3) if result.pair_ratios else 0.0,
        "same_text": f"{result.same_text}/{len(result.pair_ratios)}",
        "check": {"target": TARGET_RATIO, "value": round(ratio, 3), "pass": ratio >= TARGET_RATIO},
    }
