"""The next token from a step's logits, as transformers' `generate` picks it, in plain torch.

The plain Llama loop (`llama/generate.py`) uses this instead of transformers' logits processors,
whose import is most of the start-up cost. The same steps in the same order: the repetition
penalty on each row's own tokens (`penalise_rows`, which `rows.RowRepetitionPenalty` uses too),
then temperature, top-k and top-p, then a draw; or the arg-max when greedy.
"""

from __future__ import annotations

import torch


def penalise_rows(
    input_ids: torch.Tensor, scores: torch.Tensor, penalty: float, pads: torch.Tensor
) -> torch.Tensor:
    """transformers' repetition penalty, over each row's tokens after its `pads` left padding."""
    pads = pads.to(input_ids.device)
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    padding = positions.unsqueeze(0) < pads.unsqueeze(1)
    # Padding positions repeat the row's first real token, which is penalised anyway.
    first = input_ids.gather(1, pads.unsqueeze(1))
    ids = torch.where(padding, first, input_ids)
    seen = scores.gather(1, ids)
    seen = torch.where(seen < 0, seen * penalty, seen / penalty)
    return scores.scatter(1, ids, seen)


def next_tokens(scores: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    """One token per row from (already penalised) float32 scores. temperature <= 0: greedy."""
    if temperature <= 0:
        return scores.argmax(dim=-1)
    probs = torch.softmax(warp(scores, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, num_samples=1).squeeze(1)


def warp(scores: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    """transformers' temperature, top-k and top-p warpers, in that order: what is left out is -inf."""
    scores = scores / temperature
    if top_k > 0:
        k = min(top_k, scores.shape[-1])
        kth = torch.topk(scores, k)[0][..., -1, None]
        scores = scores.masked_fill(scores < kth, -float("inf"))
    if top_p < 1.0:
        ordered, order = torch.sort(scores, descending=False)
        cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
        drop = cumulative <= (1 - top_p)
        drop[..., -1:] = False  # the likeliest token always stays
        scores = scores.masked_fill(drop.scatter(1, order, drop), -float("inf"))
    return scores
