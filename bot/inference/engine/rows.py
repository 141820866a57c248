"""One batched `generate`, seen per request: each row streams, stops and is penalised on its own.

`transformers` decodes a left-padded batch step by step. The hooks here split that back into rows:
- `RowStreamer` receives each step's tokens and sends every row's new text to its own request;
- `RowStop` finishes a row at its own `max_tokens`, deadline, or when its consumer has left,
  while the other rows go on;
- `RowRepetitionPenalty` penalises the tokens a row has seen, leaving out its left padding
  (the pad token is the end-of-turn token for SmolLM2; penalising it would make replies run on);
- `RowDraw` picks each row's token from its own random numbers (`sampling.Draws`), as the plain
  Llama loop does, and leaves generate's own draw nothing to choose.

This module imports torch and transformers; `bot/inference/engine/local.py` imports it only when it
loads a model that runs on transformers (`load_transformers`) and when it generates.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LogitsProcessor,
    LogitsProcessorList,
    StoppingCriteria,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)
from transformers.generation.streamers import BaseStreamer

from bot.core.errors import ConfigError
from bot.inference.engine.row_text import Row, RowText, must_stop
from bot.inference.engine.sampling import Draws, draw, penalise_rows

if TYPE_CHECKING:
    from bot.inference.engine.local import Sampling

__all__ = ["Row", "RowDraw", "RowRepetitionPenalty", "RowStop", "RowStreamer", "generate_options"]


class RowStreamer(BaseStreamer):
    """Splits each step's tokens by row and streams each row's text to its own reply."""

    def __init__(self, tokenizer: Any, rows: Sequence[Row], eos_ids: set[int]) -> None:
        self._text = RowText(tokenizer, rows, eos_ids)
        self._prompt_seen = False

    def put(self, value: torch.Tensor) -> None:
        if not self._prompt_seen:  # the first call carries the prompts themselves
            self._prompt_seen = True
            return
        self._text.step(value.reshape(-1).tolist())

    def end(self) -> None:
        self._text.end()


class RowStop(StoppingCriteria):
    """Per row: done once it has written its budget, its consumer left, or its deadline passed."""

    def __init__(self, rows: Sequence[Row], prompt_len: int) -> None:
        self._rows = rows
        self._prompt_len = prompt_len

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        written = input_ids.shape[1] - self._prompt_len
        stop = [row.ended or written >= row.budget or must_stop(row) for row in self._rows]
        return torch.tensor(stop, dtype=torch.bool, device=input_ids.device)


class RowRepetitionPenalty(LogitsProcessor):
    """transformers' repetition penalty, applied to each row's own tokens only (not its padding)."""

    def __init__(self, penalty: float, pads: Sequence[int]) -> None:
        self._penalty = penalty
        self._pads = torch.tensor(list(pads), dtype=torch.long)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        return penalise_rows(input_ids, scores, self._penalty, self._pads)


class RowDraw(LogitsProcessor):
    """The last processor: draws each row's token (`sampling.draw`) from its own numbers and masks
    every other token, so that generate's multinomial can only take it."""

    def __init__(self, draws: Draws) -> None:
        self._draws = draws

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        rows = range(scores.shape[0])
        chosen = draw(torch.softmax(scores.float(), dim=-1), self._draws.uniform(rows, scores.device))
        only = torch.full_like(scores, -float("inf"))
        return only.scatter(1, chosen.unsqueeze(1), 0.0)


def load_transformers(source: str, device: str) -> tuple[Any, Any]:
    """A transformers model and tokenizer from a directory or Hub id, on `device`, for inference."""
    local = Path(source).expanduser().is_dir()
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local)
        model = AutoModelForCausalLM.from_pretrained(source, local_files_only=local, dtype="auto")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"KINDRED_MODEL: cannot load model {source!r}: {exc}") from exc
    model.to(torch.device(device))  # type: ignore[arg-type]
    model.eval()  # type: ignore[no-untyped-call]
    return model, tokenizer


def generate_options(sampling: Sampling, pads: list[int], draws: Draws) -> dict[str, Any]:
    """generate's options: the penalty and the warpers in transformers' usual order, then the
    rows' own draw."""
    s = sampling
    processors: list[Any] = []
    if s.repetition_penalty != 1.0:
        processors.append(RowRepetitionPenalty(s.repetition_penalty, pads))
    if s.temperature <= 0:
        return {"do_sample": False, "logits_processor": LogitsProcessorList(processors)}
    processors.append(TemperatureLogitsWarper(s.temperature))
    if s.top_k > 0:
        processors.append(TopKLogitsWarper(s.top_k))
    if s.top_p < 1.0:
        processors.append(TopPLogitsWarper(s.top_p))
    processors.append(RowDraw(draws))
    # Neutral values, so that generate adds no warpers of its own after ours.
    return {
        "do_sample": True,
        "temperature": 1.0,
        "top_k": 0,
        "top_p": 1.0,
        "logits_processor": LogitsProcessorList(processors),
    }
