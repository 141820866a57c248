"""One batched `generate`, seen per request: each row streams, stops and is penalised on its own.

`transformers` decodes a left-padded batch step by step. The hooks here split that back into rows:
- `RowStreamer` receives each step's tokens and sends every row's new text to its own request;
- `RowStop` finishes a row at its own `max_tokens`, deadline, or when its consumer has left,
  while the other rows go on;
- `RowRepetitionPenalty` penalises the tokens a row has seen, leaving out its left padding
  (the pad token is the end-of-turn token for SmolLM2; penalising it would make replies run on).

This module imports torch and transformers; `bot/inference/local.py` imports it only when it
generates.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
from transformers import LogitsProcessor, StoppingCriteria
from transformers.generation.streamers import BaseStreamer

# Held back at the end of a row's text: the start of a character whose bytes are not all there yet.
_INCOMPLETE = "\ufffd"


class Reply(Protocol):
    """Where one row's output goes (a request waiting on the event loop)."""

    max_tokens: int
    deadline: float
    timed_out: bool

    def cancelled(self) -> bool: ...

    def post(self, item: str | BaseException | None) -> None: ...

    def timeout_error(self) -> BaseException: ...


@dataclass(slots=True, eq=False)
class Row:
    """One request's place in a batch."""

    reply: Reply
    budget: int  # tokens it may still write: its max_tokens, or less when the prompt is long
    pad: int  # left padding in front of its prompt
    ids: list[int] = field(default_factory=list)
    printed: int = 0
    ended: bool = False


class RowStreamer(BaseStreamer):
    """Splits each step's tokens by row and streams each row's text to its own reply."""

    def __init__(self, tokenizer: Any, rows: Sequence[Row], eos_ids: set[int]) -> None:
        self._tokenizer = tokenizer
        self._rows = rows
        self._eos = eos_ids
        self._prompt_seen = False

    def put(self, value: torch.Tensor) -> None:
        if not self._prompt_seen:  # the first call carries the prompts themselves
            self._prompt_seen = True
            return
        for row, token in zip(self._rows, value.reshape(-1).tolist(), strict=True):
            if row.ended:
                continue
            if token in self._eos:
                self._finish(row)
                continue
            row.ids.append(int(token))
            if len(row.ids) >= row.budget or _must_stop(row):
                self._finish(row)
            else:
                self._flush(row, final=False)

    def end(self) -> None:
        for row in self._rows:
            if not row.ended:
                self._finish(row)

    def _flush(self, row: Row, *, final: bool) -> None:
        text = self._tokenizer.decode(row.ids, skip_special_tokens=True)
        if not final and text.endswith(_INCOMPLETE):
            return
        if len(text) > row.printed:
            row.reply.post(text[row.printed :])
            row.printed = len(text)

    def _finish(self, row: Row) -> None:
        row.ended = True
        if row.reply.cancelled():
            return
        self._flush(row, final=True)
        row.reply.post(row.reply.timeout_error() if row.reply.timed_out else None)


def _must_stop(row: Row) -> bool:
    reply = row.reply
    if reply.cancelled():
        return True
    if time.monotonic() >= reply.deadline:
        reply.timed_out = True
    return reply.timed_out


class RowStop(StoppingCriteria):
    """Per row: done once it has written its budget, its consumer left, or its deadline passed."""

    def __init__(self, rows: Sequence[Row], prompt_len: int) -> None:
        self._rows = rows
        self._prompt_len = prompt_len

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        written = input_ids.shape[1] - self._prompt_len
        stop = [row.ended or written >= row.budget or _must_stop(row) for row in self._rows]
        return torch.tensor(stop, dtype=torch.bool, device=input_ids.device)


class RowRepetitionPenalty(LogitsProcessor):
    """transformers' repetition penalty, applied to each row's own tokens only (not its padding)."""

    def __init__(self, penalty: float, pads: Sequence[int]) -> None:
        self._penalty = penalty
        self._pads = torch.tensor(list(pads), dtype=torch.long)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        pads = self._pads.to(input_ids.device)
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        padding = positions.unsqueeze(0) < pads.unsqueeze(1)
        # Padding positions repeat the row's first real token, which is penalised anyway.
        first = input_ids.gather(1, pads.unsqueeze(1))
        ids = torch.where(padding, first, input_ids)
        seen = scores.gather(1, ids)
        seen = torch.where(seen < 0, seen * self._penalty, seen / self._penalty)
        return scores.scatter(1, ids, seen)
