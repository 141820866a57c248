"""One real KTO run on the tiny model, with TRL's KTOTrainer and a peft LoRA adapter."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from bot.core.learning.models import TrainingExample
from bot.core.models import JSONObject
from bot.training import LoraKtoTrainer, TrainingOptions
from bot.training.tokens import end_of_turn_id
from tests.training.tasks import question_back


def test_one_kto_step_saves_a_trained_adapter_and_reports_progress(
    tiny_options: TrainingOptions, tmp_path: Path
) -> None:
    from dataclasses import replace

    from safetensors.torch import load_file

    records: list[JSONObject] = []
    trainer = LoraKtoTrainer(replace(tiny_options, max_steps=1))
    metrics = trainer.train(question_back(0, 8), tmp_path / "v1", records.append)

    assert trainer.base_model == tiny_options.base_model
    assert {"adapter_config.json", "adapter_model.safetensors"} <= {
        p.name for p in (tmp_path / "v1").iterdir()
    }
    config = json.loads((tmp_path / "v1" / "adapter_config.json").read_text())
    assert config["r"] == 8 and config["peft_type"] == "LORA"
    # peft starts every lora_B at zero, so the adapter is the base until a step moves it.
    weights = load_file(str(tmp_path / "v1" / "adapter_model.safetensors"))
    lora_b = [w for name, w in weights.items() if "lora_B" in name]
    assert lora_b and any(float(w.abs().max()) > 0 for w in lora_b)
    assert len(records) == 1 and records[0]["step"] == 1
    assert isinstance(records[0]["loss"], float) and records[0]["kl"] is not None
    assert records[0]["examples_per_s"] > 0
    assert metrics["steps"] == 1 and metrics["examples"] == {"desirable": 4, "undesirable": 4}
    json.dumps(metrics)  # JSON only: it is stored with the adapter


def test_epochs_bound_the_steps_by_the_number_of_examples(tiny_options: TrainingOptions) -> None:
    """3 passes over 8 examples in steps of 8 are 3 steps, whatever max_steps allows."""
    from dataclasses import replace

    from bot.training.options import steps_for

    options = replace(tiny_options, max_steps=50, epochs=3.0, batch_size=8)
    assert [steps_for(options, n) for n in (1, 8, 9, 100, 1000)] == [1, 3, 4, 38, 50]
    assert steps_for(replace(options, epochs=None), 8) == 50
    with pytest.raises(ValueError, match="epochs"):
        replace(options, epochs=0.0)
    records: list[JSONObject] = []
    metrics = LoraKtoTrainer(options).train(
        question_back(0, 8), Path(tempfile.mkdtemp()) / "v1", records.append
    )
    assert metrics["steps"] == 3 and len(records) == 3


def test_cut_replies_are_tokenized_without_the_end_token(tiny_options: TrainingOptions) -> None:
    from bot.training.trl_kto import build_trainer

    examples = [
        TrainingExample(i, e.prompt, e.completion, e.desirable, cut=i % 3 == 0)
        for i, e in enumerate(question_back(0, 12))
    ]
    with tempfile.TemporaryDirectory() as scratch:
        run = build_trainer(tiny_options, examples, scratch, lambda _: None, 1.0, 1.0)
        tokenizer = run.trainer.processing_class
        eos = end_of_turn_id(tokenizer)
        by_text = {e.completion: e for e in examples}
        rows = list(run.trainer.train_dataset)
        for row in rows:
            text = tokenizer.decode(row["completion_ids"], skip_special_tokens=True)
            example = by_text[text]
            assert (row["completion_ids"][-1] == eos) is (not example.cut), text
            assert row["completion_ids"].count(eos) == (0 if example.cut else 1)
        # TRL's mismatched KL completions: each batch's completions rotated by one.
        first = rows[: tiny_options.batch_size]
        assert [r["KL_completion_ids"] for r in first] == [first[-1]["completion_ids"]] + [
            r["completion_ids"] for r in first[:-1]
        ]
        batch: dict[str, Any] = run.trainer.data_collator(rows[:4])
        for ids, mask, row in zip(batch["input_ids"], batch["completion_mask"], rows[:4], strict=True):
            last = int(mask.nonzero().max())
            assert int(ids[last]) == row["completion_ids"][-1]


def test_an_empty_cut_reply_is_left_out(tiny_options: TrainingOptions) -> None:
    from bot.training.trl_kto import build_trainer

    examples = [*question_back(0, 4), TrainingExample(99, question_back(0, 1)[0].prompt, "", True, cut=True)]
    with tempfile.TemporaryDirectory() as scratch:
        run = build_trainer(tiny_options, examples, scratch, lambda _: None, 1.0, 1.0)
        assert len(run.trainer.train_dataset) == 4


def test_too_few_examples_or_a_bad_weight_are_refused(tiny_options: TrainingOptions, tmp_path: Path) -> None:
    trainer = LoraKtoTrainer(tiny_options)
    with pytest.raises(ValueError, match="at least 2"):
        trainer.train(question_back(0, 1), tmp_path, lambda _: None)
    with pytest.raises(ValueError, match="positive"):
        trainer.train(question_back(0, 8), tmp_path, lambda _: None, desirable_weight=0.0)


def test_options_refuse_a_batch_too_small_for_kto() -> None:
    with pytest.raises(ValueError, match="at least 4"):
        TrainingOptions("base", batch_size=2)
    with pytest.raises(ValueError, match="device"):
        TrainingOptions("base", device="tpu")
