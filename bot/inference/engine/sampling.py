"""The next token from a step's logits, as transformers' `generate` picks it, in plain torch.

The plain Llama loop (`llama/generate.py`) uses this instead of transformers' logits processors,
whose import is most of the start-up cost. The same steps in the same order: the repetition
penalty on each row's own tokens (`penalise_rows`, which `rows.RowRepetitionPenalty` uses too),
then temperature, top-k and top-p, then a draw; or the arg-max when greedy.

The draw is by inverse CDF from one uniform number per row (`Draws`): a seeded row takes its
numbers from a generator of its own, so its tokens depend on its seed and its own probabilities
only, never on which other rows share its batch or how many numbers they drew. An unseeded row
draws from torch's global generator, as random as `torch.multinomial` was.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


class Draws:
    """One uniform number in [0, 1) per row and step: from the row's own generator when it has a
    seed, else from torch's global one."""

    def __init__(self, seeds: Sequence[int | None]) -> None:
        self._generators = [None if s is None else torch.Generator().manual_seed(s) for s in seeds]

    def uniform(self, rows: Sequence[int], device: torch.device) -> torch.Tensor:
        """The next number of each of `rows` (indexes into the seeds), on `device`, as float64."""
        values = [torch.rand(1, dtype=torch.float64, generator=self._generators[row]) for row in rows]
        return torch.cat(values).to(device)


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


def next_tokens(
    scores: torch.Tensor, temperature: float, top_k: int, top_p: float, uniform: torch.Tensor | None = None
) -> torch.Tensor:
    """One token per row from (already penalised) float32 scores. temperature <= 0: greedy.

    `uniform`: each row's number in [0, 1) (`Draws.uniform`); None draws them from torch's global
    generator."""
    if temperature <= 0:
        return scores.argmax(dim=-1)
    probs = torch.softmax(warp(scores, temperature, top_k, top_p), dim=-1)
    if uniform is None:
        uniform = torch.rand(scores.shape[0], dtype=torch.float64, device=scores.device)
    return draw(probs, uniform)


def draw(probs: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
    """The token whose share of the cumulative probabilities holds each row's number: a token of
    probability 0 is never drawn, and the same probabilities and number give the same token."""
    cumulative = probs.to(torch.float64).cumsum(dim=-1)
    total = cumulative[:, -1]
    # Strictly below the total, so that a number a hair under 1 cannot round past the last token.
    target = torch.minimum(uniform.to(total.dtype) * total, torch.nextafter(total, torch.zeros_like(total)))
    target = target.unsqueeze(1)
    found = torch.searchsorted(cumulative, target, right=True).squeeze(1)
    return found.clamp(max=probs.shape[-1] - 1)


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
