"""Each row of a batch, seen as its own reply: its tokens become text, and it stops on its own.

Shared by both ways the local engine decodes: transformers' `generate` (its hooks in `rows.py`)
and the plain Llama loop (`llama/generate.py`). No torch and no transformers here: a step's
tokens arrive as plain ints, one per row.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.core.models import EndReason

# Held back at the end of a row's text: the start of a character whose bytes are not all there yet.
_INCOMPLETE = "\ufffd"


class Reply(Protocol):
    """Where one row's output goes (a request waiting on the event loop)."""

    max_tokens: int
    deadline: float
    timed_out: bool
    # How the row ended, set before its end is posted ("length": its budget; "stop": EOS).
    reason: EndReason | None

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


class RowText:
    """Sends every row's new text to its own reply as the steps' tokens arrive."""

    def __init__(self, tokenizer: Any, rows: Sequence[Row], eos_ids: set[int]) -> None:
        self._tokenizer = tokenizer
        self.rows = rows
        self._eos = eos_ids

    def step(self, tokens: Sequence[int]) -> None:
        """One token for each row, in the rows' order (ended rows' tokens are ignored)."""
        for row, token in zip(self.rows, tokens, strict=True):
            if row.ended:
                continue
            if token in self._eos:
                self.finish(row, "stop")
                continue
            row.ids.append(int(token))
            if len(row.ids) >= row.budget:
                self.finish(row, "length")
            elif must_stop(row):
                self.finish(row)
            else:
                self._flush(row, final=False)

    def end(self) -> None:
        """The batch ran out of steps (the context's end): rows still going were cut there."""
        for row in self.rows:
            if not row.ended:
                self.finish(row, "length")

    def _flush(self, row: Row, *, final: bool) -> None:
        text = self._tokenizer.decode(row.ids, skip_special_tokens=True)
        if not final and text.endswith(_INCOMPLETE):
            return
        if len(text) > row.printed:
            row.reply.post(text[row.printed :])
            row.printed = len(text)

    def finish(self, row: Row, reason: EndReason | None = None) -> None:
        """End the row: its last text, then its end (None), or its timeout. `reason` is how it
        ended, None when its consumer left or its deadline passed."""
        row.ended = True
        if row.reply.cancelled():
            return
        self._flush(row, final=True)
        # Set before the end is posted: the loop reads it once it gets the end.
        row.reply.reason = reason
        row.reply.post(row.reply.timeout_error() if row.reply.timed_out else None)


def must_stop(row: Row) -> bool:
    """Whether the row's consumer left or its deadline passed (then it is marked timed out)."""
    reply = row.reply
    if reply.cancelled():
        return True
    if time.monotonic() >= reply.deadline:
        reply.timed_out = True
    return reply.timed_out
