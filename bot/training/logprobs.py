"""Completion log-probabilities under an adapter and under the base model. Imports torch and peft.

`bot/training/scorer.py` imports this module when it first scores. The base model is loaded
once; adapters are loaded into it with peft, by folder, and the base is measured with the
adapters disabled, so both sides of every comparison run on the same weights.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from bot.training.loading import load_base
from bot.training.options import TrainingOptions
from bot.training.tokens import Tokenized

# Rows × scored positions per forward: the log-softmax over the vocabulary (49k for SmolLM2)
# takes 4 bytes × vocabulary per position, twice when the base is compared.
LOGIT_BUDGET = 1024
# Adapters kept loaded: the candidate and the serving one of one gate.
KEEP_LOADED = 2


@dataclass(frozen=True, slots=True)
class RowStats:
    """One completion's sums over its tokens: log π (adapter), log π_base, KL(π ‖ π_base)."""

    logp: float
    base_logp: float
    kl: float
    tokens: int


class ScoringModel:
    """The base model with the adapters it is asked about."""

    def __init__(self, options: TrainingOptions) -> None:
        self.options = options
        self.model, self.tokenizer, self.device = load_base(options)
        self.model.eval()
        self._peft: Any = None
        self._loaded: dict[tuple[str, str], str] = {}
        self._counter = 0

    def row_stats(self, adapter: Path | None, rows: Sequence[Tokenized]) -> list[RowStats]:
        """Per row, in order. With `adapter` None, the adapter side is the base itself (KL 0)."""
        found: dict[int, RowStats] = {}
        for indices in _batches(rows, self.options.batch_size):
            batch = [rows[i] for i in indices]
            with torch.inference_mode():
                stats = self._batch_stats(adapter, batch)
            found.update(zip(indices, stats, strict=True))
        return [found[i] for i in range(len(rows))]

    def _batch_stats(self, adapter: Path | None, batch: list[Tokenized]) -> list[RowStats]:
        inputs, targets, mask = _left_padded(batch, self._pad_id(), self.device)
        keep = targets.shape[1] + 1
        with self._base():
            base = _log_softmax(self._model(), inputs, keep)
        if adapter is None:
            policy, kl = base, torch.zeros(mask.shape, device=mask.device)
        else:
            self._activate(adapter)
            policy = _log_softmax(self._model(), inputs, keep)
            kl = (policy.exp() * (policy - base)).sum(-1)
        logp = _token_logps(policy, targets) * mask
        base_logp = _token_logps(base, targets) * mask
        kl = kl * mask
        return [
            RowStats(float(logp[i].sum()), float(base_logp[i].sum()), float(kl[i].sum()), int(mask[i].sum()))
            for i in range(len(batch))
        ]

    def _model(self) -> Any:
        return self.model if self._peft is None else self._peft

    def _base(self) -> AbstractContextManager[Any]:
        return nullcontext() if self._peft is None else self._peft.disable_adapter()

    def _activate(self, folder: Path) -> None:
        """Make the adapter in `folder` the active one, loading it unless it is loaded already."""
        from peft import PeftModel

        key = (str(folder.resolve()), _version(folder))
        name = self._loaded.get(key)
        if name is None:
            self._counter += 1
            name = f"a{self._counter}"
            if self._peft is None:
                self._peft = PeftModel.from_pretrained(self.model, str(folder), adapter_name=name)
                self._peft.eval()
            else:
                self._peft.load_adapter(str(folder), adapter_name=name, is_trainable=False)
            self._loaded[key] = name
        self._peft.set_adapter(name)
        self._evict(keep=name)

    def _evict(self, keep: str) -> None:
        while len(self._loaded) > KEEP_LOADED:
            oldest = next(k for k, v in self._loaded.items() if v != keep)
            self._peft.delete_adapter(self._loaded.pop(oldest))

    def _pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(self.tokenizer.eos_token_id if pad is None else pad)


def _version(folder: Path) -> str:
    """Which training wrote the folder: a re-trained folder at the same path is a new adapter."""
    parts = []
    for path in sorted(folder.glob("adapter_*")):
        stat = path.stat()
        parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    if not any(p.startswith("adapter_config.json") for p in parts):
        raise FileNotFoundError(f"no LoRA adapter (adapter_config.json) in {folder}")
    return ";".join(parts)


def _batches(rows: Sequence[Tokenized], max_rows: int) -> Iterator[list[int]]:
    """Row indices grouped by length, each group within LOGIT_BUDGET scored positions."""
    order = sorted(range(len(rows)), key=lambda i: len(rows[i].prompt_ids) + len(rows[i].completion_ids))
    group: list[int] = []
    widest = 0
    for i in order:
        width = len(rows[i].completion_ids) + 1
        if group and (len(group) >= max_rows or (len(group) + 1) * max(widest, width) > LOGIT_BUDGET):
            yield group
            group, widest = [], 0
        group.append(i)
        widest = max(widest, width)
    if group:
        yield group


def _left_padded(batch: list[Tokenized], pad_id: int, device: str) -> tuple[dict[str, Any], Any, Any]:
    """Inputs padded on the left (so every completion ends the row), the completion targets
    right-aligned in a (rows, longest completion) grid, and their mask."""
    width = max(len(r.prompt_ids) + len(r.completion_ids) for r in batch)
    longest = max(len(r.completion_ids) for r in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    targets = torch.full((len(batch), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), longest), dtype=torch.float32)
    for i, row in enumerate(batch):
        sequence = row.prompt_ids + row.completion_ids
        ids[i, width - len(sequence) :] = torch.tensor(sequence, dtype=torch.long)
        attention[i, width - len(sequence) :] = 1
        if row.completion_ids:
            targets[i, longest - len(row.completion_ids) :] = torch.tensor(
                row.completion_ids, dtype=torch.long
            )
            mask[i, longest - len(row.completion_ids) :] = 1.0
    # Positions count from each row's first real token, as if it were not padded.
    positions = (attention.cumsum(1) - 1).clamp(min=0)
    inputs = {
        "input_ids": ids.to(device),
        "attention_mask": attention.to(device),
        "position_ids": positions.to(device),
    }
    return inputs, targets.to(device), mask.to(device)


def _log_softmax(model: Any, inputs: dict[str, Any], keep: int) -> Any:
    """Log-probabilities of the next token at the last `keep - 1` positions that predict one."""
    logits = model(**inputs, logits_to_keep=keep, use_cache=False).logits[:, :-1, :]
    return torch.log_softmax(logits.float(), dim=-1)


def _token_logps(log_probs: Any, targets: Any) -> Any:
    return log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
