"""The plain Llama engine's decoding loop: a left-padded batch, step by step, each row on its own.

What `LocalInference` asks of transformers' `generate` for a transformers model, this does for a
`llama.LlamaModel`: the positions and masks of a left-padded batch (as `generate` derives them
from the attention mask), one prefill, then one token per step from the KV cache, the sampling of
`sampling.py`, and each row's text and stop through `row_text.RowText`. Rows that have ended
leave the batch (their cache rows dropped), so the rest run as a smaller batch.

Rows with the same prompt and adapter (best-of-n's candidates) share its prefill: it runs once,
and its KV cache and last logits are copied to each of them. Reading a long prompt is most of a
short reply's cost on a CPU; n rows of one step cost little more than one.

`TensorSlots` holds the LoRA adapters (`llama_lora.py`) that `lora.AdapterSet` loads for it;
rows name theirs, and a batch may mix them, as peft's `adapter_names` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from bot.core.errors import ConfigError
from bot.inference.engine.lora import BASE
from bot.inference.engine.row_text import RowText
from bot.inference.engine.sampling import Draws, next_tokens, penalise_rows
from bot.inference.llama.chat_tokenizer import ChatTokenizer
from bot.inference.llama.lora import LoraWeights, load_lora
from bot.inference.llama.model import KVCache, LlamaModel, RowLora, attention_mask


def load_plain(path: Path, device: str) -> tuple[LlamaModel, ChatTokenizer] | None:
    """The plain Llama engine's model and tokenizer for `path`, or None when it cannot run it."""
    tokenizer = ChatTokenizer.load(path)
    if tokenizer is None or tokenizer.eos_token_id is None:
        return None
    try:
        model = LlamaModel.load(path, device)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"KINDRED_MODEL: cannot load model {str(path)!r}: {exc}") from exc
    return None if model is None else (model, tokenizer)


class TensorSlots:
    """Loaded adapters by internal name, as tensors on the model's device."""

    def __init__(self, model: LlamaModel) -> None:
        self._model = model
        self.weights: dict[str, LoraWeights] = {}

    def load(self, path: Path, internal: str) -> None:
        self.weights[internal] = load_lora(path, self._model.device, self._model.dtype)

    def delete(self, internal: str, active: str) -> None:
        self.weights.pop(internal, None)


@dataclass(frozen=True, slots=True)
class Decoding:
    """How each step's token is chosen (see local.Sampling); temperature 0 is greedy."""

    temperature: float
    top_k: int
    top_p: float
    repetition_penalty: float


def generate(
    model: LlamaModel,
    prompts: Sequence[list[int]],
    adapters: Sequence[str],
    slots: TensorSlots,
    text: RowText,
    *,
    pad_id: int,
    max_new: int,
    decoding: Decoding,
    draws: Draws | None = None,
) -> None:
    """Decode every row of `prompts` until each has ended (EOS, budget, consumer gone, deadline)
    or `max_new` steps have run; `text` streams and ends each row. `adapters` are internal
    adapter names, one per row (lora.BASE: none). `draws`: each row's random numbers (None:
    torch's global generator for all)."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    keep = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, prompt in enumerate(prompts):
        ids[i, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        keep[i, width - len(prompt) :] = 1
    pads = torch.tensor([width - len(p) for p in prompts], dtype=torch.long)
    ids, keep, pads = ids.to(model.device), keep.to(model.device), pads.to(model.device)
    positions = (keep.cumsum(-1) - 1).masked_fill(keep == 0, 1)
    cache = KVCache(model.shape.layers, capacity=width + max_new)
    active = list(range(len(prompts)))
    seen, step_ids = ids, ids
    with torch.inference_mode():
        for index in range(max_new):
            if index == 0:
                scores = _prefill(model, prompts, adapters, slots, ids, positions, keep, cache)
            else:
                lora = _row_lora([adapters[i] for i in active], slots, model.device)
                mask = attention_mask(keep, step_ids.shape[1], model.dtype)
                scores = model.forward(step_ids, positions, mask, cache, lora)
            if decoding.repetition_penalty != 1.0:
                scores = penalise_rows(seen, scores, decoding.repetition_penalty, pads)
            uniform = None if draws is None else draws.uniform(active, model.device)
            chosen = next_tokens(scores, decoding.temperature, decoding.top_k, decoding.top_p, uniform)
            picked = chosen.tolist()
            step = [pad_id] * len(text.rows)
            for row_index, token in zip(active, picked, strict=True):
                step[row_index] = token
            text.step(step)
            still = [j for j, i in enumerate(active) if not text.rows[i].ended]
            if not still:
                break
            if len(still) < len(active):
                rows = torch.tensor(still, dtype=torch.long, device=model.device)
                cache.keep(rows)
                seen, keep, pads = seen[rows], keep[rows], pads[rows]
                chosen, positions = chosen[rows], positions[rows]
                active = [active[j] for j in still]
            step_ids = chosen[:, None]
            seen = torch.cat([seen, step_ids], dim=1)
            keep = torch.cat([keep, torch.ones_like(step_ids)], dim=1)
            positions = positions[:, -1:] + 1
    text.end()


def _prefill(
    model: LlamaModel,
    prompts: Sequence[list[int]],
    adapters: Sequence[str],
    slots: TensorSlots,
    ids: torch.Tensor,
    positions: torch.Tensor,
    keep: torch.Tensor,
    cache: KVCache,
) -> torch.Tensor:
    """Read every prompt into `cache` and return each row's logits; a prompt that several rows
    share with the same adapter is read once (its rows padded alike, so their inputs are equal)."""
    firsts: dict[tuple[tuple[int, ...], str], int] = {}
    source = [firsts.setdefault((tuple(p), a), len(firsts)) for p, a in zip(prompts, adapters, strict=True)]
    if len(firsts) == len(prompts):
        lora = _row_lora(adapters, slots, model.device)
        return model.forward(ids, positions, attention_mask(keep, ids.shape[1], model.dtype), cache, lora)
    leaders = [source.index(u) for u in range(len(firsts))]
    unique = torch.tensor(leaders, dtype=torch.long, device=model.device)
    lora = _row_lora([adapters[i] for i in leaders], slots, model.device)
    mask = attention_mask(keep[unique], ids.shape[1], model.dtype)
    scores = model.forward(ids[unique], positions[unique], mask, cache, lora)
    expand = torch.tensor(source, dtype=torch.long, device=model.device)
    cache.keep(expand)
    return scores[expand]


def _row_lora(names: Sequence[str], slots: TensorSlots, device: torch.device) -> RowLora:
    """Each adapter of the batch with the rows that use it (None: every row)."""
    used = sorted({n for n in names if n != BASE})
    if not used:
        return ()
    if len(used) == 1 and all(n == used[0] for n in names):
        return [(None, slots.weights[used[0]])]
    found: list[tuple[torch.Tensor | None, LoraWeights]] = []
    for name in used:
        rows = torch.tensor([i for i, n in enumerate(names) if n == name], dtype=torch.long, device=device)
        found.append((rows, slots.weights[name]))
    return found
