"""The learning simulation's days and nights (bench/learning_sim.py is its command line).

The product is built from settings, as `kindred run` builds it: the store, the embedder, the local
engine with its adapters folder, the conversation's policy, and the nightly job from the job
registry's own definition (`nightly_job`), run under the jobs' attempt policy (`run_attempt`).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.learning_sim import (
    QUICK_TARGET_MINUTES,
    QUICK_TARGET_POINTS,
    TARGET_MINUTES,
    TARGET_POINTS,
    TASTES,
    Night,
    Plan,
    binomial_se,
    prompts,
    rate,
)
from bench.parts.common import log, machine, now_iso
from bench.parts.learning.people import DayReport, Teacher, chat_day, held_out_replies
from bot.core.chat.conversation import Conversation
from bot.core.chat.ports import Inference
from bot.core.jobs import run_attempt
from bot.core.store import Store
from bot.inference.engine.threads import limit_torch_threads
from bot.wiring.backends import load_embedder, load_inference, open_store
from bot.wiring.kindred import policy as conversation_policy
from bot.wiring.settings import Settings, load_settings
from bot.wiring.training_jobs import TrainingModels, nightly_job

OVERRIDABLE = ("nights", "people", "candidates", "eval_prompts", "train_steps", "heldout_share")


def sim_settings(args: argparse.Namespace, plan: Plan, data_dir: Path) -> Settings:
    """The product's settings for the run: its own data folder and the plan's reply budget. The
    training and the gate are the product's defaults (the proof is of what ships) unless the plan
    overrides its steps or held-out share."""
    env = {
        "KINDRED_DATA_DIR": str(data_dir),
        "KINDRED_STORE": "sqlite",
        "KINDRED_MODEL": args.model,
        "KINDRED_MAX_NEW_TOKENS": str(plan.max_new_tokens),
        "KINDRED_TRAIN_SEED": str(args.seed),
        "KINDRED_TRAIN_DEVICE": "auto",
        "KINDRED_INFERENCE_BATCH_SIZE": "16",
        "KINDRED_GENERATION_TIMEOUT_S": "3600",
    }
    if plan.train_steps is not None:
        env["KINDRED_TRAIN_MAX_STEPS"] = str(plan.train_steps)
    if plan.heldout_share is not None:
        env["KINDRED_TRAIN_HELDOUT_SHARE"] = str(plan.heldout_share)
    os.environ.update(env)
    return load_settings(None)


async def simulate(args: argparse.Namespace, plan: Plan, data_dir: Path) -> dict[str, Any]:
    started = time.monotonic()
    overrides = {name: getattr(args, name) for name in OVERRIDABLE if getattr(args, name) is not None}
    plan = dataclasses.replace(plan, **overrides)
    settings = sim_settings(args, plan, data_dir)
    # The report names the steps and the share the nights ran with, whoever chose them.
    training = settings.training
    plan = dataclasses.replace(plan, train_steps=training.max_steps, heldout_share=training.heldout_share)
    taste = TASTES[args.taste]
    teacher = Teacher(
        taste, args.teacher == "random", args.noise, args.react_to_misses, random.Random(args.seed)
    )
    held_out = prompts(10_000 + args.seed, plan.eval_prompts)
    lines = prompts(args.seed, 200, avoid=set(held_out))
    log(f"loading the store, the embedder and {args.model} into {data_dir}")
    store = await open_store(settings)
    embedder = load_embedder(settings)
    inference = load_inference(settings)
    # The engine keeps torch to half the cores, leaving one to a bot's event loop; here nothing
    # else runs, and generating the days is most of the simulation's time.
    limit_torch_threads(len(os.sched_getaffinity(0)))
    conversation = Conversation(store, embedder, inference, conversation_policy(settings))
    persona = settings.chat.persona

    async def opener() -> Store:
        return await open_store(settings)

    job = nightly_job(settings, opener, TrainingModels.of(settings))
    try:
        base = await measure(inference, persona, held_out, plan, None, taste)
        log(f"base model: {base:.3f} of held-out replies meet the taste ({args.taste})")
        nights: list[Night] = []
        days: list[DayReport] = []
        served, serving_path = base, None
        for night in range(1, plan.nights + 1):
            phase = time.monotonic()
            day = await chat_day(
                conversation, plan.people, plan.candidates, lines, plan.prompts_per_chat, teacher, night
            )
            days.append(day)
            chat_min = (time.monotonic() - phase) / 60
            log(
                f"day {night}: {day.replies} replies, {day.true_hits} meet the taste; "
                f"{day.liked} 👍 and {day.disliked} 👎 given"
            )
            phase = time.monotonic()
            result = await run_attempt(job, {"run_key": f"sim-night-{night}"})
            train_min = (time.monotonic() - phase) / 60
            log(f"night {night}: {result.get('message')}")
            candidate_rate = None
            phase = time.monotonic()
            version = result.get("version")
            if isinstance(version, int):
                record = await store.adapters.get_adapter(version)
                assert record is not None
                candidate_rate = await measure(inference, persona, held_out, plan, record.path, taste)
                if result.get("promoted"):
                    served, serving_path = candidate_rate, record.path
            nights.append(
                Night(
                    night=night,
                    served_rate=served,
                    candidate_rate=candidate_rate,
                    promoted=bool(result.get("promoted")),
                    status=str(result.get("status")),
                    message=str(result.get("message", "")),
                    examples=dict(result.get("dataset", {}).get("examples", {})),
                    gate=dict(result.get("gate", {})),
                    minutes={
                        "chat": round(chat_min, 2),
                        "night": round(train_min, 2),
                        "measure": round((time.monotonic() - phase) / 60, 2),
                    },
                )
            )
            log(f"night {night}: candidate {candidate_rate}, served {served:.3f} ({serving_path or 'base'})")
    finally:
        for part in (embedder, inference):
            close = getattr(part, "close", None)
            if close is not None:
                await close()
        await store.close()
    return report(args, plan, base, nights, days, (time.monotonic() - started) / 60)


async def measure(
    inference: Inference,
    persona: str,
    lines: Sequence[str],
    plan: Plan,
    adapter: str | None,
    taste: Callable[[str], bool],
) -> float:
    replies = await held_out_replies(
        inference, persona, lines, plan.eval_samples, plan.max_new_tokens, adapter
    )
    return rate(replies, taste)


def report(
    args: argparse.Namespace,
    plan: Plan,
    base: float,
    nights: list[Night],
    days: list[DayReport],
    minutes: float,
) -> dict[str, Any]:
    n = plan.eval_prompts * plan.eval_samples
    final = nights[-1].served_rate if nights else base
    lift = round((final - base) * 100, 1)
    target = QUICK_TARGET_POINTS if args.quick else TARGET_POINTS
    limit = QUICK_TARGET_MINUTES if args.quick else TARGET_MINUTES
    rates = [round(base, 4), *(round(night.served_rate, 4) for night in nights)]
    never_lower = all(later >= earlier for earlier, later in itertools.pairwise(rates))
    promoted = [night.promoted for night in nights]
    checks: dict[str, Any] = {
        "minutes": {"value": round(minutes, 1), "limit": limit, "passed": minutes < limit},
        "no_night_lowers_the_served_rate": {"passed": never_lower},
    }
    if args.teacher == "random":
        checks["random_teacher_promotes_nothing"] = {"passed": not any(promoted)}
    else:
        checks["lift_points"] = {"value": lift, "target": target, "passed": lift >= target}
    return {
        "benchmark": "learning_sim",
        "date": now_iso(),
        "machine": machine(),
        "quick": args.quick,
        "teacher": args.teacher,
        "taste": args.taste,
        "noise": args.noise,
        "react_to_misses": args.react_to_misses,
        "seed": args.seed,
        "plan": dataclasses.asdict(plan),
        "base_rate": round(base, 4),
        "rates": rates[1:],
        "candidate_rates": [night.candidate_rate for night in nights],
        "promoted": promoted,
        "lift_points": lift,
        # One held-out rate is a share of n replies: its standard error, in points.
        "rate_standard_error_points": round(binomial_se(final, n) * 100, 1),
        "held_out_replies": n,
        "days": [dataclasses.asdict(day) for day in days],
        "nights": [dataclasses.asdict(night) for night in nights],
        "minutes": round(minutes, 1),
        "checks": checks,
    }
