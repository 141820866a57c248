"""A Llama forward pass in plain torch, for the local engine's fast start-up.

Importing transformers' modeling code takes ~3 s of CPU at every start (docs/benchmarks.md,
"First run"); torch alone takes ~1 s. For a plain Llama (SmolLM2, the bundled model, is one)
this module reads the same safetensors weights and computes what `LlamaForCausalLM` computes,
op for op in the same order: RMSNorm in float32, default RoPE, grouped-query attention through
torch's scaled_dot_product_attention with a KV cache, and the SwiGLU MLP. Rows may carry LoRA
adapters (`llama_lora.py`), applied as peft applies them: `W x + scale * B(A x)`. On the CPU the
matrices are packed for oneDNN by the first forward pass (`packing.py` says why).

`LlamaModel.load` returns None for anything it does not compute exactly (other architectures,
RoPE scaling, biases, quantized or sharded weights); those stay with transformers.
tests/inference/test_llama.py holds it to transformers' logits and greedy tokens.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from bot.inference.llama.packing import linear, pack

WEIGHTS_FILE = "model.safetensors"
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_PROJECTION_SUFFIXES = tuple(f"{p}.weight" for p in PROJECTIONS)
LM_HEAD = "lm_head.weight"
# One (row indices or None for every row, {(layer, projection): (A, B, scale)}) per adapter in a batch.
LayerLora = dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor, float]]
RowLora = Sequence[tuple[torch.Tensor | None, LayerLora]]


@dataclass(frozen=True, slots=True)
class LlamaShape:
    """The numbers of a Llama config that the forward pass needs."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    eps: float
    rope_theta: float
    vocab: int
    max_positions: int
    tied: bool
    dtype: str | None
    eos_token_id: list[int]

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> LlamaShape | None:
        """The shape, or None when the config asks for something this module does not compute."""
        rope = config.get("rope_parameters") or config.get("rope_scaling") or {}
        plain = (
            config.get("architectures") == ["LlamaForCausalLM"]
            and config.get("model_type") == "llama"
            and config.get("hidden_act", "silu") == "silu"
            and not config.get("attention_bias", False)
            and not config.get("mlp_bias", False)
            and config.get("pretraining_tp", 1) == 1
            and config.get("quantization_config") is None
            and rope.get("rope_type", rope.get("type", "default")) == "default"
        )
        if not plain:
            return None
        heads = int(config["num_attention_heads"])
        hidden = int(config["hidden_size"])
        eos = config.get("eos_token_id")
        return cls(
            hidden=hidden,
            layers=int(config["num_hidden_layers"]),
            heads=heads,
            kv_heads=int(config.get("num_key_value_heads") or heads),
            head_dim=int(config.get("head_dim") or hidden // heads),
            eps=float(config.get("rms_norm_eps", 1e-6)),
            rope_theta=float(rope.get("rope_theta", config.get("rope_theta", 10000.0))),
            vocab=int(config["vocab_size"]),
            max_positions=int(config.get("max_position_embeddings", 2048)),
            tied=bool(config.get("tie_word_embeddings", False)),
            dtype=config.get("dtype") or config.get("torch_dtype"),
            eos_token_id=[] if eos is None else [int(x) for x in (eos if isinstance(eos, list) else [eos])],
        )


class KVCache:
    """Each layer's keys and values so far, (rows, kv_heads, positions, head_dim).

    With a `capacity` (positions), each layer's tensors are allocated once, at the first extend,
    and each step writes into them: growing them by `torch.cat` copied the whole cache at every
    step, and the big short-lived allocations cost as much system time as the model's own work.
    """

    def __init__(self, layers: int, capacity: int = 0) -> None:
        self.keys: list[torch.Tensor | None] = [None] * layers
        self.values: list[torch.Tensor | None] = [None] * layers
        self.capacity = capacity
        self.length = [0] * layers

    def extend(self, layer: int, key: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        start = self.length[layer]
        end = start + key.shape[2]
        old_k, old_v = self.keys[layer], self.values[layer]
        if old_k is None and self.capacity >= end:
            shape = (key.shape[0], key.shape[1], self.capacity, key.shape[3])
            old_k, old_v = key.new_empty(shape), value.new_empty(shape)
        if old_k is None or old_v is None:
            full_k, full_v = key, value
        elif old_k.shape[2] >= end:
            old_k[:, :, start:end], old_v[:, :, start:end] = key, value
            full_k, full_v = old_k, old_v
        else:
            full_k = torch.cat([old_k[:, :, :start], key], dim=2)
            full_v = torch.cat([old_v[:, :, :start], value], dim=2)
        self.keys[layer], self.values[layer], self.length[layer] = full_k, full_v, end
        return full_k[:, :, :end], full_v[:, :, :end]

    def keep(self, rows: torch.Tensor) -> None:
        """Drop every row not in `rows` (finished replies)."""
        self.keys = [None if k is None else k.index_select(0, rows) for k in self.keys]
        self.values = [None if v is None else v.index_select(0, rows) for v in self.values]


class LlamaModel:
    """LlamaForCausalLM's inference forward pass over weights read from safetensors."""

    def __init__(self, shape: LlamaShape, weights: dict[str, torch.Tensor], device: torch.device) -> None:
        self.shape = shape
        self.device = device
        self._w = weights
        self.dtype = weights["model.embed_tokens.weight"].dtype
        self._lm_head = weights.get("lm_head.weight", weights["model.embed_tokens.weight"])
        self._packed: dict[str, torch.Tensor] | None = None  # None: not packed yet
        # Where a reply ends besides the tokenizer's EOS: generation_config.json, as generate reads it.
        self.eos_token_ids = list(shape.eos_token_id)
        dim = shape.head_dim
        exponents = torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float) / dim
        self._inv_freq = 1.0 / (shape.rope_theta**exponents)

    @classmethod
    def load(cls, model_dir: Path, device: str = "cpu") -> LlamaModel | None:
        """The model in `model_dir`, or None when it is not a plain single-file Llama."""
        config_path, weights_path = model_dir / "config.json", model_dir / WEIGHTS_FILE
        if not config_path.is_file() or not weights_path.is_file():
            return None
        shape = LlamaShape.from_config(json.loads(config_path.read_text(encoding="utf-8")))
        if shape is None:
            return None
        from safetensors.torch import load_file

        # Memory-mapped, so that start-up reads no more than the first reply touches. The model
        # directory is only ever replaced whole, by a rename (model_files._publish), which leaves
        # this mapping on the old file intact.
        weights = load_file(str(weights_path), device=device)
        if not _has_all(shape, weights):
            return None
        if shape.dtype and hasattr(torch, shape.dtype):
            wanted = getattr(torch, shape.dtype)
            weights = {k: v.to(wanted) if v.is_floating_point() else v for k, v in weights.items()}
        model = cls(shape, weights, torch.device(device))
        generation = model_dir / "generation_config.json"
        if generation.is_file():
            eos = json.loads(generation.read_text(encoding="utf-8")).get("eos_token_id")
            if eos is not None:
                model.eos_token_ids = [int(x) for x in (eos if isinstance(eos, list) else [eos])]
        return model

    def forward(
        self,
        ids: torch.Tensor,
        positions: torch.Tensor,
        mask: torch.Tensor,
        cache: KVCache,
        lora: RowLora = (),
    ) -> torch.Tensor:
        """Logits (float32) at the last position of each row. `mask` is additive, broadcast to
        (rows, 1, new positions, all positions); the cache grows by the new positions."""
        w, shape, packed = self._w, self.shape, self._packs()
        h = F.embedding(ids, w["model.embed_tokens.weight"])
        cos, sin = self._rope(positions, h.dtype)
        for layer in range(shape.layers):
            prefix = f"model.layers.{layer}."
            residual = h
            h = _rms_norm(h, w[prefix + "input_layernorm.weight"], shape.eps)
            h = residual + self._attention(layer, h, cos, sin, mask, cache, lora)
            residual = h
            h = _rms_norm(h, w[prefix + "post_attention_layernorm.weight"], shape.eps)
            gate = self._linear(h, prefix + "mlp.gate_proj.weight", (layer, "gate_proj"), lora)
            up = self._linear(h, prefix + "mlp.up_proj.weight", (layer, "up_proj"), lora)
            h = residual + self._linear(
                F.silu(gate) * up, prefix + "mlp.down_proj.weight", (layer, "down_proj"), lora
            )
        h = _rms_norm(h, w["model.norm.weight"], shape.eps)
        return linear(h[:, -1:, :], self._lm_head, packed.get(LM_HEAD))[:, -1, :].float()

    def _packs(self) -> dict[str, torch.Tensor]:
        if self._packed is None:
            names = [n for n, t in self._w.items() if t.dim() == 2 and n.endswith(_PROJECTION_SUFFIXES)]
            self._packed = pack({**self._w, LM_HEAD: self._lm_head}, [*names, LM_HEAD])
        return self._packed

    def _linear(self, x: torch.Tensor, name: str, key: tuple[int, str], lora: RowLora) -> torch.Tensor:
        """The projection `name` of `x`, with the LoRA of the rows that carry one (as peft adds it)."""
        y = linear(x, self._w[name], self._packs().get(name))
        for rows, weights in lora:
            found = weights.get(key)
            if found is None:
                continue
            a, b, scale = found
            if rows is None:
                y = y + F.linear(F.linear(x, a), b) * scale
            else:
                y[rows] += F.linear(F.linear(x[rows], a), b) * scale
        return y

    def _attention(
        self, layer: int, h: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor,
        cache: KVCache, lora: RowLora,
    ) -> torch.Tensor:  # fmt: skip
        shape = self.shape
        prefix = f"model.layers.{layer}.self_attn."
        rows, length = h.shape[0], h.shape[1]

        def heads(name: str, count: int) -> torch.Tensor:
            out = self._linear(h, prefix + name + ".weight", (layer, name), lora)
            return out.view(rows, length, count, shape.head_dim).transpose(1, 2)

        q = _rotate(heads("q_proj", shape.heads), cos, sin)
        k = _rotate(heads("k_proj", shape.kv_heads), cos, sin)
        k, v = cache.extend(layer, k, heads("v_proj", shape.kv_heads))
        groups = shape.heads // shape.kv_heads
        scale = shape.head_dim**-0.5
        if groups > 1 and length == 1:
            # One new position: a kv head's query heads stand in as its query positions, so the
            # keys and values are read in place instead of copied once per query head.
            q = q.reshape(rows, shape.kv_heads, groups, shape.head_dim)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
            out = out.reshape(rows, 1, shape.heads * shape.head_dim)
        else:
            if groups > 1:
                k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
            out = out.transpose(1, 2).reshape(rows, length, shape.heads * shape.head_dim)
        return self._linear(out, prefix + "o_proj.weight", (layer, "o_proj"), lora)

    def _rope(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        freqs = positions[:, :, None].float() * self._inv_freq[None, None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        # (rows, 1, positions, head_dim): broadcast over the heads.
        return emb.cos().to(dtype)[:, None], emb.sin().to(dtype)[:, None]


def _has_all(shape: LlamaShape, weights: dict[str, torch.Tensor]) -> bool:
    names = ["model.embed_tokens.weight", "model.norm.weight"]
    if not shape.tied:
        names.append("lm_head.weight")
    for layer in range(shape.layers):
        prefix = f"model.layers.{layer}."
        names += [prefix + "input_layernorm.weight", prefix + "post_attention_layernorm.weight"]
        names += [prefix + ("self_attn." if p.endswith(("q_proj", "k_proj", "v_proj", "o_proj")) else "mlp.")
                  + p + ".weight" for p in PROJECTIONS]  # fmt: skip
    return all(name in weights for name in names)


def _rms_norm(h: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    dtype = h.dtype
    h = h.to(torch.float32)
    variance = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(variance + eps)
    return weight * h.to(dtype)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return (x * cos) + (rotated * sin)


def attention_mask(keep: torch.Tensor, new: int, dtype: torch.dtype) -> torch.Tensor:
    """The additive mask for `new` positions at the end of `keep` (rows, all positions; 1 = a real
    token): causal, with padding masked. Masked by the dtype's minimum, not -inf, so that a row
    of padding alone still averages to numbers instead of NaN."""
    total = keep.shape[1]
    query_at = torch.arange(total - new, total, device=keep.device)[:, None]
    causal = torch.arange(total, device=keep.device)[None, :] <= query_at  # (new, total)
    allowed = causal[None, :, :] & keep[:, None, :].bool()
    mask = torch.zeros(allowed.shape, dtype=dtype, device=keep.device)
    return mask.masked_fill(~allowed, torch.finfo(dtype).min)[:, None]
