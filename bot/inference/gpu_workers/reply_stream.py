"""The wire format between a waiting chat and the GPU worker writing its reply: one Redis Stream.

Keys, per request id (chosen by the chat side, one per reply):
- `kindred:reply:<id>`: the reply, as stream entries in order (fields below);
- `kindred:reply-owner:<id>`: the run id of the one worker run allowed to write it;
- `kindred:cancel:<id>`: set by the chat side when it stops listening.
All three expire (`ttl_s`), so nothing piles up in Redis.

Each entry has `k` (kind), `run` (the writing run), `seq` and `t` (text):
- `start`: a worker run took the request; `seq` is the chunk number it continues from;
- `chunk`: reply text number `seq` (0, 1, 2, … over the whole reply, whichever run wrote it);
- `end`: the reply is complete; `r` says how it ended, `stop` (the model ended it) or `length`
  (its token budget did), and is absent when the worker could not say (an older worker, too);
- `error`: it failed, `t` says why, and `to` is `1` when it failed
  by running past the worker's time limit (the reader raises InferenceTimeout then, as every
  backend does; a reader that does not know `to` still raises InferenceError with the text).

Writes go through Lua scripts, so each is one atomic step: a run writes only while it owns the
request and only while nobody cancelled it (`WRITE`), and taking a request over returns what is
already there in the same step (`TAKE_OVER`), so no entry of an earlier run can slip in after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bot.core.models import EndReason

GENERATE_JOB = "kindred.inference.generate"
Kind = Literal["start", "chunk", "end", "error"]
# How long a reply's keys live after their last write: long enough for any reader, then gone.
DEFAULT_TTL_S = 900

# KEYS: stream, owner, cancel. ARGV: run, ttl, then field/value pairs.
# Returns 1 (written), 0 (another run owns the request now) or -1 (cancelled by the reader).
WRITE = """
if redis.call('get', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('exists', KEYS[3]) == 1 then return -1 end
redis.call('xadd', KEYS[1], '*', unpack(ARGV, 3))
redis.call('expire', KEYS[1], ARGV[2])
redis.call('expire', KEYS[2], ARGV[2])
return 1
"""
# KEYS: stream, owner, cancel. ARGV: run, ttl. Returns false when cancelled, else every entry.
TAKE_OVER = """
if redis.call('exists', KEYS[3]) == 1 then return false end
redis.call('set', KEYS[2], ARGV[1], 'EX', ARGV[2])
return redis.call('xrange', KEYS[1], '-', '+')
"""


@dataclass(frozen=True, slots=True)
class ReplyKeys:
    request_id: str

    @property
    def stream(self) -> str:
        return f"kindred:reply:{self.request_id}"

    @property
    def owner(self) -> str:
        return f"kindred:reply-owner:{self.request_id}"

    @property
    def cancel(self) -> str:
        return f"kindred:cancel:{self.request_id}"

    def all(self) -> list[str]:
        return [self.stream, self.owner, self.cancel]


@dataclass(frozen=True, slots=True)
class Entry:
    kind: Kind
    run: str
    seq: int
    text: str
    timed_out: bool = False  # an `error` that was the worker's time limit
    reason: EndReason | None = None  # an `end`'s: how the reply ended, when the worker knew

    def fields(self) -> list[str]:
        found = ["k", self.kind, "run", self.run, "seq", str(self.seq), "t", self.text]
        if self.timed_out:
            found += ["to", "1"]
        if self.reason is not None:
            found += ["r", self.reason]
        return found


def parse_entry(raw: Any) -> Entry:
    """A stream entry's field map (bytes or str, as redis-py returns it) as an Entry."""
    fields = {_text(k): _text(v) for k, v in dict(raw).items()}
    kind = fields.get("k", "")
    if kind not in ("start", "chunk", "end", "error"):
        raise ValueError(f"unknown reply entry kind {kind!r}")
    return Entry(
        kind,  # type: ignore[arg-type]
        fields.get("run", ""),
        int(fields.get("seq", "0")),
        fields.get("t", ""),
        timed_out=fields.get("to") == "1",
        reason=_reason(fields.get("r")),
    )


def parse_range(raw: Any) -> list[Entry]:
    """XRANGE's answer ([id, [field, value, …]] pairs from a Lua script) as entries."""
    entries: list[Entry] = []
    for _, flat in raw or []:
        pairs = list(flat)
        entries.append(parse_entry(zip(pairs[::2], pairs[1::2], strict=True)))
    return entries


@dataclass(frozen=True, slots=True)
class Progress:
    """What a reply stream already holds, as a new run sees it when it takes over."""

    text: str  # every chunk so far, in order: the reply's beginning the reader has (or will) show
    chunks: int
    finished: bool  # an end or error entry is there: nothing is left to do


def progress(entries: list[Entry]) -> Progress:
    parts: list[str] = []
    for entry in entries:
        if entry.kind in ("end", "error"):
            return Progress("".join(parts), len(parts), True)
        if entry.kind == "chunk" and entry.seq == len(parts):
            parts.append(entry.text)
    return Progress("".join(parts), len(parts), False)


def _reason(value: str | None) -> EndReason | None:
    """An end's `r`; anything but a known reason (or none at all) is "cannot say"."""
    if value == "stop":
        return "stop"
    if value == "length":
        return "length"
    return None


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
