"""The learning simulation's days, nights and canaries (bench/learning_sim.py is its command line).

The product is built from settings, as `kindred run` builds it: the store, the embedder, the local
engine with its adapters folder, the conversation's policy, the nightly job and the canary's job
from the job registry's own definitions (`nightly_job`, `add_canary_job`), each run under the
jobs' attempt policy (`run_attempt`). The simulation adds only its people, its clock and its
lockstep rounds (people.py, lockstep.py), and the held-out measurement (measure.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.learning_sim import TASTES, Plan, prompts
from bench.parts.common import log
from bench.parts.learning.lockstep import Lockstep, SimClock
from bench.parts.learning.measure import Meter, serving_variant
from bench.parts.learning.nights import Night, decision, trained
from bench.parts.learning.people import Day, DayReport, chat_day, count_arms
from bench.parts.learning.report import canary_plan, report
from bench.parts.learning.teachers import Teacher
from bot.core.chat.conversation import Conversation
from bot.core.jobs import Job, JobRegistry, run_attempt
from bot.core.learning.canary import CANARY_JOB
from bot.core.learning.models import Canary, Variant
from bot.core.loading import LoadOnce
from bot.core.memory.ports import Embedder
from bot.core.models import JSONObject
from bot.core.store import Store
from bot.inference.engine.threads import limit_torch_threads
from bot.wiring.backends import load_embedder, load_inference, open_store
from bot.wiring.canary_jobs import add_canary_job, canary_policy
from bot.wiring.job_store import per_job
from bot.wiring.kindred import policy as conversation_policy
from bot.wiring.settings import Settings, load_settings
from bot.wiring.training_jobs import TrainingModels, nightly_job

OVERRIDABLE = (
    "nights", "people", "canary_people", "candidates", "eval_prompts", "train_steps", "heldout_share",
)  # fmt: skip
CANARY_SHARE = 0.5
# Days: a canary expires at its first pass that does not decide, the one at the end of its day.
CANARY_LIFE_DAYS = 1e-6


def sim_settings(args: argparse.Namespace, plan: Plan, data_dir: Path) -> Settings:
    """The product's settings for the run: its own data folder, the plan's reply budget, what a
    night trains, and a canary that lives one simulated day. The training, the pre-screen and the
    canary's test are the product's defaults (the proof is of what ships) unless the plan
    overrides the steps or the held-out share."""
    env = {
        "KINDRED_DATA_DIR": str(data_dir),
        "KINDRED_STORE": "sqlite",
        "KINDRED_MODEL": args.model,
        "KINDRED_MAX_NEW_TOKENS": str(plan.max_new_tokens),
        "KINDRED_TRAIN_SEED": str(args.seed),
        "KINDRED_TRAIN_DEVICE": "auto",
        "KINDRED_TRAIN_LEARNER": args.learner,
        "KINDRED_TRAIN_BEST_OF": str(args.best_of),
        "KINDRED_TRAIN_CANARY_SHARE": str(CANARY_SHARE),
        "KINDRED_TRAIN_CANARY_SETTLE_MINUTES": "0",
        "KINDRED_TRAIN_CANARY_MAX_DAYS": str(CANARY_LIFE_DAYS),
        "KINDRED_INFERENCE_BATCH_SIZE": "16",
        "KINDRED_GENERATION_TIMEOUT_S": "3600",
    }
    if plan.train_steps is not None:
        env["KINDRED_TRAIN_MAX_STEPS"] = str(plan.train_steps)
    if plan.heldout_share is not None:
        env["KINDRED_TRAIN_HELDOUT_SHARE"] = str(plan.heldout_share)
    os.environ.update(env)
    return load_settings(None)


@dataclasses.dataclass(slots=True)
class Sim:
    """The product's parts for one run, and the simulation's around them."""

    args: argparse.Namespace
    plan: Plan
    settings: Settings
    store: Store
    conversation: Conversation
    lockstep: Lockstep
    teacher: Teacher
    meter: Meter
    nightly: Job
    canary: Job
    lines: list[str]

    async def day(self, number: int) -> tuple[DayReport, list[Any]]:
        plan = self.plan
        people = plan.people if number == 0 else plan.canary_people
        day = Day(number, people, plan.candidates, plan.prompts_per_chat, self.lines, self.args.seed)
        return await chat_day(self.conversation, self.lockstep, self.teacher, day)


async def simulate(args: argparse.Namespace, plan: Plan, data_dir: Path) -> dict[str, Any]:
    started = time.monotonic()
    overrides = {name: getattr(args, name) for name in OVERRIDABLE if getattr(args, name) is not None}
    plan = dataclasses.replace(plan, **overrides)
    settings = sim_settings(args, plan, data_dir)
    # The report names the steps and the share the nights ran with, whoever chose them.
    training = settings.training
    plan = dataclasses.replace(plan, train_steps=training.max_steps, heldout_share=training.heldout_share)
    taste = TASTES[args.taste]
    teacher = Teacher(args.teacher, taste, args.noise, args.react_to_misses, args.claim_share)
    held_out = prompts(10_000 + args.seed, plan.eval_prompts)
    lines = prompts(args.seed, 200, avoid=set(held_out))
    log(f"loading the store, the embedder and {args.model} into {data_dir}")
    store = await open_store(settings)
    embedder = load_embedder(settings)
    inference = load_inference(settings)
    # The engine keeps torch to half the cores, leaving one to a bot's event loop; here nothing
    # else runs, and generating is most of the simulation's time. Fixed for the whole run: the
    # sums of a matmul depend on how many threads share them.
    threads = limit_torch_threads(args.threads or len(os.sched_getaffinity(0)))
    lockstep = Lockstep(inference)
    policy = dataclasses.replace(conversation_policy(settings), sample_seed=args.seed)
    conversation = Conversation(store, embedder, lockstep, policy, clock=SimClock())

    async def opener() -> Store:
        return await open_store(settings)

    shared: LoadOnce[Embedder] = LoadOnce(lambda: embedder, what="embedder")
    registry = JobRegistry()
    add_canary_job(registry, settings, per_job(opener))
    meter = Meter(
        store, lockstep, embedder, settings.chat.persona, held_out, samples=plan.eval_samples,
        max_new_tokens=plan.max_new_tokens, taste=taste, seed=args.seed,
    )  # fmt: skip
    sim = Sim(
        args, plan, settings, store, conversation, lockstep, teacher, meter,
        nightly_job(settings, per_job(opener), TrainingModels.of(settings), embedder=shared),
        registry.get(CANARY_JOB), lines,
    )  # fmt: skip
    try:
        base = await meter.rate(Variant())
        log(f"base model: {base.rate:.3f} of held-out replies meet the taste ({args.taste})")
        phase = time.monotonic()
        first, _ = await sim.day(0)
        first.minutes = minutes_since(phase)
        log(
            f"day 0: {first.replies} replies, {first.true_hits} meet the taste, {first.liked} 👍, "
            f"{first.disliked} 👎"
        )
        days, nights = [first], []
        for night in range(1, plan.nights + 1):
            found, day = await night_and_day(sim, night)
            nights.append(found)
            if day is not None:
                days.append(day)
    finally:
        for part in (embedder, inference):
            close = getattr(part, "close", None)
            if close is not None:
                await close()
        await store.close()
    canary = canary_plan(plan, dict(canary_policy(settings.training).as_json()))
    minutes = (time.monotonic() - started) / 60
    return report(args, plan, base, nights, days, minutes, threads=threads, canary=canary)


async def night_and_day(sim: Sim, number: int) -> tuple[Night, DayReport | None]:
    """Night `number`, its candidate's canary day (or a plain day that feeds the next night), the
    canary's decision, and the rates of what serves after it."""
    store, meter = sim.store, sim.meter
    phase = time.monotonic()
    result = await run_attempt(sim.nightly, {"run_key": f"sim-night-{number}"})
    night = await trained(store, number, result)
    night.minutes["night"] = minutes_since(phase)
    log(f"night {number}: {night.message}")
    canary = await store.trials.running_canary()
    phase = time.monotonic()
    if canary is not None:
        night.candidate = canary.candidate.describe()
        night.candidate_rate = (await meter.rate(canary.candidate)).rate
        log(f"night {number}: the canary, {night.candidate}, meets the taste in {night.candidate_rate:.3f}")
    night.minutes["measure"] = minutes_since(phase)
    day: DayReport | None = None
    passed: JSONObject | None = None
    if canary is not None or number < sim.plan.nights:
        phase = time.monotonic()
        day, replied = await sim.day(number)
        if canary is not None:
            passed = await decide(sim, canary)
            arms = {entry.turn_id: entry.arm for entry in await store.trials.entries(canary.id)}
            count_arms(day, replied, arms, sim.teacher)
        day.minutes = minutes_since(phase)
        log(f"day {number}: {day.replies} replies, {day.true_hits} meet the taste; arms {day.arms}")
    night.decision = decision(night, canary, passed)
    log(f"night {number}: {night.decision['decision']}: {night.decision['reason']}")
    phase = time.monotonic()
    night.served_rate = (await meter.rate(await serving_variant(store, sim.settings.training.best_of))).rate
    night.minutes["measure"] += minutes_since(phase)
    return night, day


async def decide(sim: Sim, canary: Canary) -> JSONObject:
    """The canary's job at the end of its day: every reply is settled, the test decides, and an
    undecided canary expires (its life is shorter than a day)."""
    passed = await run_attempt(sim.canary, {"now": datetime.now(UTC).isoformat()})
    if passed.get("decision") is None:  # cannot happen while the canary's life is CANARY_LIFE_DAYS
        raise RuntimeError(f"canary {canary.id} is still undecided after its day: {passed}")
    return passed


def minutes_since(started: float) -> float:
    return round((time.monotonic() - started) / 60, 2)
