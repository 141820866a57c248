"""Best-of-n's cost on the local engine: n candidates sampled for one reply, against one reply.

Each prompt is a companion's (a persona and a memory block, then the person's message), answered
once per n, the n in turn for each prompt, so that a neighbour's burst of load falls on every n
alike. The engine samples as it serves (`Sampling()` defaults), seeded per prompt: candidate 0 of
every n is the reply n = 1 writes, so the candidates beside it are all that n adds.

- n = 1 is a stream: first byte at its first chunk, whole at its end.
- n > 1 is `sample`: nothing can be sent before the reward model has chosen, so the first byte
  and the whole reply both come when the last candidate is done.

A best-of-n reply takes as long as its longest candidate: `tokens` reports the longest candidate's
tokens beside n = 1's, so that the step cost and the longer reply can be told apart. `cpu` is the
process's CPU time per reply (every thread: the generation thread and the event loop): on a shared
machine, wall time also measures the neighbours, CPU time much less so.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.parts.common import log, millis
from bot.core.models import ChatMessage
from bot.inference.engine.local import LocalInference

# The target: best of 4 costs at most 1.5 times one reply, whole.
TARGET_RATIO_AT_4 = 1.5
PERSONA = (
    "You are Kindred, a warm and curious companion. You remember what people tell you and bring it "
    "up when it helps. Keep replies short and kind, ask at most one question, and never pretend to "
    "be human.\n\nWhat you remember about them:\n"
    "- Their name is Sam and they live in Leeds with a grey cat called Pixel.\n"
    "- They work as a nurse on night shifts and find the first night of a block the hardest.\n"
    "- Their sister Jo is getting married in June; they are giving a speech.\n"
    "- They started learning the piano in January and practise on weekends.\n"
    "- They are vegetarian and love cooking curries with whatever is left in the fridge.\n"
    "- They run by the river on Sunday mornings and are training for a 10k in autumn.\n"
    "- Their favourite book is The Left Hand of Darkness.\n"
    "- They get anxious before phone calls with their landlord."
)
MESSAGES = (
    "Hi! How was your day?",
    "I just got back from a long run by the river and my legs are tired.",
    "Can you help me think of an opening line for Jo's wedding speech?",
    "What should I cook tonight with rice, spinach and two eggs?",
    "First night shift of the week tomorrow. Any tips to stay awake?",
    "Pixel knocked a glass off the table again.",
    "I finally played a whole piece on the piano without stopping!",
    "I have to call my landlord about the boiler and I'm dreading it.",
)


@dataclass(slots=True)
class Level:
    """What one n measured over every prompt."""

    first_byte: list[float] = field(default_factory=list)
    whole: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)  # the longest candidate's, per prompt


def prompts(count: int) -> list[list[ChatMessage]]:
    return [
        [ChatMessage("system", PERSONA), ChatMessage("user", MESSAGES[i % len(MESSAGES)])]
        for i in range(count)
    ]


async def one(
    engine: LocalInference, messages: list[ChatMessage], n: int, max_tokens: int, seed: int, level: Level
) -> None:
    started, cpu = time.perf_counter(), time.process_time()
    if n == 1:
        parts: list[str] = []
        async for chunk in engine.stream(messages, max_tokens=max_tokens, seed=seed):
            if not parts:
                level.first_byte.append(time.perf_counter() - started)
            parts.append(chunk)
        level.whole.append(time.perf_counter() - started)
        level.cpu.append(time.process_time() - cpu)
        level.tokens.append(engine.count_tokens("".join(parts)))
        return
    found = await engine.sample(messages, n=n, max_tokens=max_tokens, seed=seed)
    done = time.perf_counter() - started
    level.cpu.append(time.process_time() - cpu)
    level.first_byte.append(done)
    level.whole.append(done)
    level.tokens.append(max(engine.count_tokens(c.text) for c in found))


async def measure(engine: LocalInference, ns: Sequence[int], count: int, max_tokens: int) -> dict[str, Level]:
    levels = {str(n): Level() for n in ns}
    await one(engine, prompts(1)[0], max(ns), 4, 0, Level())  # warm-up: first-call allocations
    for index, messages in enumerate(prompts(count)):
        log(f"prompt {index + 1}/{count}: n = {', '.join(map(str, ns))}")
        for n in ns:
            await one(engine, messages, n, max_tokens, index, levels[str(n)])
    return levels


def summary(levels: dict[str, Level]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per n: first byte, whole reply and tokens; and the ratios to n = 1 (p50 over prompts, and
    the median of each prompt's own ratio), with the issue's target at 4."""
    results: dict[str, Any] = {}
    for key, level in levels.items():
        results[key] = {
            "first_byte": millis(level.first_byte),
            "whole": millis(level.whole),
            "cpu": millis(level.cpu),
            "tokens_p50": statistics.median(level.tokens),
            "tokens_per_s_of_the_longest": round(sum(level.tokens) / sum(level.whole), 2),
        }
    checks: dict[str, Any] = {}
    base = levels.get("1")
    if base is None:
        return results, checks
    for key, level in levels.items():
        if key == "1":
            continue
        paired = [w / b for w, b in zip(level.whole, base.whole, strict=True)]
        checks[f"whole_ratio_at_{key}"] = round(
            results[key]["whole"]["p50_ms"] / results["1"]["whole"]["p50_ms"], 3
        )
        checks[f"paired_ratio_at_{key}"] = round(statistics.median(paired), 3)
        checks[f"cpu_ratio_at_{key}"] = round(
            results[key]["cpu"]["p50_ms"] / results["1"]["cpu"]["p50_ms"], 3
        )
    if "4" in levels:
        value = checks["whole_ratio_at_4"]
        checks["target_at_4"] = {
            "target": TARGET_RATIO_AT_4,
            "value": value,
            "pass": value <= TARGET_RATIO_AT_4,
        }
    return results, checks


def cpu_flags() -> list[str]:
    """The CPU's bf16 matrix features (AMX, AVX512-BF16): where bf16 runs fast."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        return []
    flags = set()
    for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
    return sorted(f for f in flags if f.startswith("amx") or f == "avx512_bf16")
