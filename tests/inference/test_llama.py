"""The plain Llama engine (bot/inference/llama*.py, chat_tokenizer.py, sampling.py) held to
transformers: the same logits, the same greedy tokens alone and in a left-padded batch, the same
LoRA effect as peft, the same prompts and token counts, the same sampling filters. And the point
of it: a chat on a plain Llama never imports transformers. Models that it does not compute
exactly stay on transformers."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from bot.core.errors import ConfigError, InferenceError
from bot.core.models import ChatMessage
from bot.inference.engine.local import LocalInference, Sampling
from bot.inference.engine.sampling import warp
from bot.inference.llama.chat_tokenizer import ChatTokenizer
from bot.inference.llama.model import KVCache, LlamaModel, attention_mask
from tests.inference.lora_files import make_adapter
from tests.support.streams import text_of

pytestmark = pytest.mark.model

PROMPTS = [
    [ChatMessage("user", "hi there")],
    [ChatMessage("system", "Be brief."), ChatMessage("user", "What is the capital of France, please?")],
    [ChatMessage("user", "Tell me a story about a cat and a dog who live together in a small flat")],
]
TRICKY = [
    "héllo wörld",
    "3.5 km, then https://example.org/a?b=1",
    "你好。今日は。مرحبا",
    " two  spaces\n\ttab",
    "<|im_end|> x",
]


def engines(tiny_dir: Path, adapters: Path | None = None) -> dict[str, LocalInference]:
    greedy = Sampling(temperature=0.0)
    return {
        kind: LocalInference.load(tiny_dir, sampling=greedy, adapters_dir=adapters, engine=kind)
        for kind in ("llama", "transformers")
    }


@pytest.mark.parametrize("capacity", [0, 6, 32], ids=["grown", "outgrown", "allocated-once"])
def test_prefill_and_a_cached_step_give_transformers_logits(tiny_dir: Path, capacity: int) -> None:
    from transformers import AutoModelForCausalLM

    reference = AutoModelForCausalLM.from_pretrained(str(tiny_dir), local_files_only=True).eval()  # type: ignore[no-untyped-call]
    model = LlamaModel.load(tiny_dir)
    assert model is not None
    ids = torch.tensor([[2, 2, 2, 105, 7, 900], [5, 17, 300, 44, 8, 61]])  # row 0 left-padded
    keep = torch.tensor([[0, 0, 0, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    positions = (keep.cumsum(-1) - 1).masked_fill(keep == 0, 1)
    with torch.inference_mode():
        expected = reference(input_ids=ids, attention_mask=keep, position_ids=positions).logits[:, -1]
        cache = KVCache(2, capacity)
        got = model.forward(ids, positions, attention_mask(keep, 6, model.dtype), cache)
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
        longer, keep = (
            torch.cat([ids, torch.tensor([[11], [12]])], 1),
            torch.cat([keep, torch.ones(2, 1)], 1).long(),
        )
        step_positions = (keep.cumsum(-1) - 1).masked_fill(keep == 0, 1)
        expected = reference(input_ids=longer, attention_mask=keep, position_ids=step_positions).logits[:, -1]
        got = model.forward(
            longer[:, -1:], step_positions[:, -1:], attention_mask(keep, 1, model.dtype), cache
        )
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


async def test_greedy_replies_match_transformers_alone_and_batched(tiny_dir: Path) -> None:
    both = engines(tiny_dir)
    assert type(both["llama"]._model) is LlamaModel
    replies = {
        kind: [await text_of(engine.stream(p, max_tokens=24)) for p in PROMPTS]
        for kind, engine in both.items()
    }
    batched = await asyncio.gather(*(text_of(both["llama"].stream(p, max_tokens=24)) for p in PROMPTS))
    assert replies["llama"] == replies["transformers"] == batched
    assert all(replies["llama"])


async def test_lora_adapters_match_peft_mixed_in_one_batch(tiny_dir: Path, tmp_path: Path) -> None:
    make_adapter(tiny_dir, tmp_path / "one", seed=1)
    make_adapter(tiny_dir, tmp_path / "two", seed=2)
    names = [None, "one", "two", "one"]
    found = {}
    for kind, engine in engines(tiny_dir, tmp_path).items():
        found[kind] = await asyncio.gather(
            *(text_of(engine.stream(PROMPTS[0], max_tokens=16, adapter=n)) for n in names)
        )
    assert found["llama"] == found["transformers"]
    assert len(set(found["llama"])) == 3


async def test_an_adapter_the_plain_engine_cannot_apply_fails_only_its_request(
    tiny_dir: Path, tmp_path: Path
) -> None:
    folder = make_adapter(tiny_dir, tmp_path / "dora", seed=1)
    config = json.loads((folder / "adapter_config.json").read_text())
    (folder / "adapter_config.json").write_text(json.dumps({**config, "use_dora": True}))
    engine = LocalInference.load(tiny_dir, adapters_dir=tmp_path)
    with pytest.raises(InferenceError, match="use_dora"):
        await text_of(engine.stream(PROMPTS[0], max_tokens=4, adapter="dora"))
    assert await text_of(engine.stream(PROMPTS[0], max_tokens=4))


def test_prompts_tokens_and_text_match_the_transformers_tokenizer(tiny_dir: Path) -> None:
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(str(tiny_dir), local_files_only=True)
    ours = ChatTokenizer.load(tiny_dir)
    assert ours is not None
    for messages in PROMPTS:
        dicts = [{"role": m.role, "content": m.content} for m in messages]
        assert ours.apply_chat_template(dicts, add_generation_prompt=True, tokenize=False) == (
            reference.apply_chat_template(dicts, add_generation_prompt=True, tokenize=False)
        )
    for text in TRICKY:
        ids = reference(text, add_special_tokens=False)["input_ids"]
        assert (
            ours(text, add_special_tokens=False)["input_ids"]
            == ids
            == ours.encode(text, add_special_tokens=False)
        )
        assert ours.decode(ids, skip_special_tokens=True) == reference.decode(ids, skip_special_tokens=True)
    assert (ours.eos_token_id, ours.pad_token_id) == (reference.eos_token_id, reference.pad_token_id)


def test_sampling_filters_match_transformers_warpers() -> None:
    from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    scores = torch.randn(4, 500, generator=torch.Generator().manual_seed(3)) * 3
    for temperature, top_k, top_p in [(0.7, 50, 0.9), (1.3, 0, 0.5), (0.2, 5, 1.0)]:
        expected = TemperatureLogitsWarper(temperature)(None, scores)
        if top_k:
            expected = TopKLogitsWarper(top_k)(None, expected)
        if top_p < 1.0:
            expected = TopPLogitsWarper(top_p)(None, expected)
        assert torch.equal(warp(scores, temperature, top_k, top_p), expected)


def test_models_it_does_not_compute_exactly_stay_on_transformers(tiny_dir: Path, tmp_path: Path) -> None:
    scaled = tmp_path / "scaled"
    shutil.copytree(tiny_dir, scaled)
    config = json.loads((scaled / "config.json").read_text())
    config["rope_scaling"] = config["rope_parameters"] = {
        "rope_type": "linear",
        "factor": 2.0,
        "rope_theta": 1e4,
    }
    (scaled / "config.json").write_text(json.dumps(config))
    assert type(LocalInference.load(scaled)._model) is not LlamaModel
    with pytest.raises(ConfigError, match="not a plain Llama"):
        LocalInference.load(scaled, engine="llama")


def test_a_chat_on_the_plain_engine_never_imports_transformers(tiny_dir: Path) -> None:
    script = (
        "import asyncio, sys\n"
        "from bot.core.models import ChatMessage\n"
        "from bot.inference.engine.local import LocalInference\n"
        f"engine = LocalInference.load({str(tiny_dir)!r})\n"
        "async def main():\n"
        "    async for _ in engine.stream([ChatMessage('user', 'hi')], max_tokens=3): pass\n"
        "    await engine.close()\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('transformers', 'peft', 'scipy')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=os.environ.copy()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


@pytest.mark.model
async def test_smollm2_greedy_reply_matches_transformers(smollm2_dir: Path) -> None:
    question = [ChatMessage("user", "What is the capital of France?")]
    replies = [
        await text_of(engine.stream(question, max_tokens=16)) for engine in engines(smollm2_dir).values()
    ]
    assert replies[0] == replies[1]
    assert "Paris" in replies[0]


def test_cpu_weights_are_packed_by_the_first_forward_and_give_f_linear_results(tiny_dir: Path) -> None:
    """packing.py: oneDNN's packed weights stand in for F.linear on the CPU (the logits tests above
    hold the whole model to transformers through them), and packing leaves torch's global random
    generator where it was: an unseeded reply's draws do not depend on whether it came first."""
    from bot.inference.llama.packing import linear, pack

    model = LlamaModel.load(tiny_dir)
    assert model is not None and model._packed is None
    ids = torch.tensor([[5, 17, 300]])
    keep = torch.ones_like(ids)
    state = torch.get_rng_state()
    model.forward(ids, keep.cumsum(-1) - 1, attention_mask(keep, 3, model.dtype), KVCache(model.shape.layers))
    assert torch.equal(torch.get_rng_state(), state)
    assert (
        model._packed
        and "model.layers.0.mlp.down_proj.weight" in model._packed
        and "lm_head.weight" in model._packed
    )

    weight = torch.randn(96, 64, generator=torch.Generator().manual_seed(1))
    packed = pack({"w": weight}, ["w"])["w"]
    for shape in [(1, 1, 64), (4, 1, 64), (3, 37, 64)]:
        x = torch.randn(shape, generator=torch.Generator().manual_seed(2))
        torch.testing.assert_close(linear(x, weight, packed), F.linear(x, weight), atol=1e-5, rtol=1e-5)
    assert pack({"w": weight.half()}, ["w"]) == {}  # nothing it does not serve well is packed
