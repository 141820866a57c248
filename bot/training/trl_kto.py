"""One KTO run with TRL's `KTOTrainer` and a peft LoRA adapter. Imports torch, TRL and peft.

`bot/training/kto.py` imports this module only when it trains. The loss, the reference (the base
model with the adapter disabled: `peft_config` given, `ref_model` None), the KL estimate and the
logged metrics are all TRL's; this module only hands it tokens and reads its logs.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasets import Dataset
from peft import LoraConfig
from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback
from trl.trainer.kto_config import KTOConfig
from trl.trainer.kto_trainer import KTOTrainer

from bot.core.learning.models import TrainingExample
from bot.core.models import JSONObject
from bot.training.loading import load_base
from bot.training.options import TrainingOptions, steps_for, use_bf16
from bot.training.tokens import tokenize_example

Progress = Callable[[JSONObject], None]


class KindredKTOTrainer(KTOTrainer):
    """TRL's KTOTrainer, given a dataset that is tokenized already (tokens.py).

    TRL 1.16 tokenizes in `_prepare_dataset` and appends the eos token to every completion of a
    plain-text dataset (its `add_eos` step), and the chat template closes every assistant turn;
    either way a reply cut at its token budget would be trained as if it had ended. So the
    dataset arrives as `prompt_ids` / `completion_ids` / `label`, and this only adds TRL's own
    mismatched KL completions: each batch's completions rotated by one, as TRL does.
    """

    def _prepare_dataset(self, dataset: Any, processing_class: Any, args: Any, dataset_name: str) -> Any:
        if not self.calculate_KL:
            return dataset

        def rotate(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
            batch["KL_completion_ids"] = [batch["completion_ids"][-1], *batch["completion_ids"][:-1]]
            return batch

        return dataset.map(rotate, batched=True, batch_size=args.per_device_train_batch_size)


class ProgressCallback(TrainerCallback):
    """Turns each of TRL's step logs into one progress record."""

    def __init__(self, progress: Progress, batch_size: int) -> None:
        self._progress = progress
        self._batch_size = batch_size
        self._started = time.monotonic()
        self.records: list[JSONObject] = []

    def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        self._started = time.monotonic()  # the speed leaves out loading and tokenizing

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **_: Any
    ) -> None:
        if not logs or "loss" not in logs:  # the run's closing summary has train_loss instead
            return
        record = step_record(logs, state.global_step, self._batch_size, time.monotonic() - self._started)
        self.records.append(record)
        self._progress(record)


def step_record(logs: dict[str, float], step: int, batch_size: int, elapsed_s: float) -> JSONObject:
    """One logged step: loss, KL, reward margin (TRL's rewards/chosen − rewards/rejected), speed."""
    chosen, rejected = logs.get("rewards/chosen"), logs.get("rewards/rejected")
    elapsed = max(elapsed_s, 1e-9)
    return {
        "step": step,
        "loss": logs["loss"],
        "kl": logs.get("kl"),
        "rewards_chosen": chosen,
        "rewards_rejected": rejected,
        # None when the step's batch held only one label: there is no margin to speak of.
        "margin": chosen - rejected if chosen is not None and rejected is not None else None,
        "learning_rate": logs.get("learning_rate"),
        "grad_norm": logs.get("grad_norm"),
        "examples_per_s": step * batch_size / elapsed,
        "tokens_per_s": logs["num_tokens"] / elapsed if "num_tokens" in logs else None,
        "elapsed_s": elapsed_s,
    }


def tokenized_dataset(
    tokenizer: Any, examples: Sequence[TrainingExample], options: TrainingOptions
) -> tuple[Dataset, int]:
    """The examples in a seeded shuffle (so batches mix labels), tokenized; and how many were truncated."""
    order = list(examples)
    random.Random(options.seed).shuffle(order)
    rows = [
        tokenize_example(tokenizer, e.prompt, e.completion, cut=e.cut, max_length=options.max_length)
        for e in order
    ]
    # An empty cut reply has no token to learn from (and KTO would average over nothing).
    kept = [(e, r) for e, r in zip(order, rows, strict=True) if r.completion_ids]
    order, rows = [e for e, _ in kept], [r for _, r in kept]
    if len(order) < 2:
        raise ValueError(f"KTO needs at least 2 examples with a reply, got {len(order)}")
    data = Dataset.from_dict(
        {
            "prompt_ids": [r.prompt_ids for r in rows],
            "completion_ids": [r.completion_ids for r in rows],
            "label": [e.desirable for e in order],
        }
    )
    return data, sum(r.truncated for r in rows)


def kto_config(
    options: TrainingOptions,
    device: str,
    output_dir: str,
    desirable_weight: float,
    undesirable_weight: float,
    steps: int,
) -> KTOConfig:
    on_gpu = device == "cuda"
    return KTOConfig(
        output_dir=output_dir,
        per_device_train_batch_size=options.batch_size,
        max_steps=steps,
        learning_rate=options.learning_rate,
        beta=options.beta,
        max_length=options.max_length,
        desirable_weight=desirable_weight,
        undesirable_weight=undesirable_weight,
        seed=options.seed,
        data_seed=options.seed,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        # A 135M model fits many times over; recomputing activations would only cost time.
        activation_checkpointing=False,
        # The reference (the base, adapter disabled) never changes during a run: its log-probs are
        # computed once per example instead of on every pass, a fifth of each later step's forwards.
        precompute_ref_log_probs=True,
        use_cpu=not on_gpu,
        bf16=use_bf16(options.bf16, device),
        dataloader_num_workers=0,
    )


def lora_config(options: TrainingOptions) -> LoraConfig:
    return LoraConfig(
        r=options.lora_rank,
        lora_alpha=options.lora_alpha,
        lora_dropout=options.lora_dropout,
        target_modules=options.target_modules,
        task_type="CAUSAL_LM",
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """A KTO trainer ready to train, and what the run's summary needs of its making."""

    trainer: KindredKTOTrainer
    callback: ProgressCallback
    device: str
    truncated: int


def build_trainer(
    options: TrainingOptions,
    examples: Sequence[TrainingExample],
    scratch: str,
    progress: Progress,
    desirable_weight: float,
    undesirable_weight: float,
) -> Prepared:
    """The base model loaded, the examples tokenized, TRL's trainer made (writing only in `scratch`)."""
    model, tokenizer, device = load_base(options)
    data, truncated = tokenized_dataset(tokenizer, examples, options)
    steps = steps_for(options, len(data))
    if steps * options.batch_size < len(data):
        # The run sees only this many (a random sample, as the seeded shuffle put them first);
        # the reference's log-probs need not be computed for the rest.
        data = data.select(range(steps * options.batch_size))
    callback = ProgressCallback(progress, options.batch_size)
    trainer = KindredKTOTrainer(
        model=model,
        ref_model=None,  # with peft_config: the reference is the base, the adapter disabled
        args=kto_config(options, device, scratch, desirable_weight, undesirable_weight, steps),
        train_dataset=data,
        processing_class=tokenizer,
        peft_config=lora_config(options),
        callbacks=[callback],
    )
    trainer.remove_callback(PrinterCallback)  # it prints every log; the progress records carry them
    return Prepared(trainer, callback, device, truncated)


def run_kto(
    options: TrainingOptions,
    examples: Sequence[TrainingExample],
    out_dir: Path,
    progress: Progress,
    desirable_weight: float,
    undesirable_weight: float,
) -> JSONObject:
    """Train one adapter from the base model, save it in `out_dir`, return the run's metrics."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kindred-kto-") as scratch:
        run = build_trainer(options, examples, scratch, progress, desirable_weight, undesirable_weight)
        run.trainer.train()
    seconds = time.monotonic() - started
    out_dir.mkdir(parents=True, exist_ok=True)
    trained: Any = run.trainer.model  # the PeftModel: saves only the adapter's files
    trained.save_pretrained(str(out_dir))
    weights = {"desirable": desirable_weight, "undesirable": undesirable_weight}
    return summary(run, examples, options, seconds, weights)


def summary(
    run: Prepared,
    examples: Sequence[TrainingExample],
    options: TrainingOptions,
    seconds: float,
    weights: dict[str, float],
) -> JSONObject:
    records = run.callback.records
    last = records[-1] if records else {}
    margins = [r["margin"] for r in records if r.get("margin") is not None]
    desirable = sum(e.desirable for e in examples)
    return {
        "steps": len(records),
        "loss": last.get("loss"),
        "kl": last.get("kl"),
        "margin": margins[-1] if margins else None,
        "examples_per_s": last.get("examples_per_s"),
        "tokens_per_s": last.get("tokens_per_s"),
        "train_seconds": seconds,
        "device": run.device,
        "bf16": bool(run.trainer.args.bf16),
        "examples": {"desirable": desirable, "undesirable": len(examples) - desirable},
        "cut": sum(e.cut for e in examples),
        "truncated": run.truncated,
        "weights": weights,
        "options": {
            "lora_rank": options.lora_rank,
            "lora_alpha": options.lora_alpha,
            "learning_rate": options.learning_rate,
            "max_steps": options.max_steps,
            "epochs": options.epochs,
            "batch_size": options.batch_size,
            "max_length": options.max_length,
            "beta": options.beta,
            "seed": options.seed,
        },
    }
