"""Conversions between the learning tables ([learning]: generations, adapters, training runs and
their examples) and the core's value types, shared by both stores, rows read by column name.

JSON columns are TEXT on SQLite and JSONB on PostgreSQL (psycopg has decoded it already); `decoded`
reads either. Times go through the dialect, as in `rows`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.core.learning.models import AdapterRecord, ExampleSnapshot, RatedReply, TrainingRun
from bot.core.models import ChatMessage, Generation, JSONObject
from bot.store.sql.rows import Dialect, NamedRow, dump_json

ADAPTER_COLUMNS = (
    "version",
    "scope",
    "base_model",
    "path",
    "window_start",
    "window_end",
    "status",
    "dataset",
    "metrics",
    "gate",
    "run_id",
    "created_at",
    "promoted_at",
)
RUN_COLUMNS = (
    "id",
    "job_key",
    "status",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "message",
    "adapter_version",
    "steps",
    "result",
)
EXAMPLE_COLUMNS = ("turn_id", "user_id", "label", "split", "reward", "parts")
# A forgotten memory's words are looked for in stored prompts by their start, so that a copy cut to
# fit the prompt (a long memory line, a long message) is found too: forgetting errs towards more.
NEEDLE_CHARS = 64


def decoded(value: Any) -> Any:
    """A JSON column's value: TEXT (SQLite) parsed, JSONB (psycopg, already parsed) as it is."""
    return json.loads(value) if isinstance(value, str) else value


def prompt_json(prompt: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """A prompt as it is stored: a JSON list of {"role", "content"} objects, in order."""
    return [{"role": message.role, "content": message.content} for message in prompt]


def prompt_text(prompt: Sequence[ChatMessage]) -> str:
    """The stored prompt column on SQLite (TEXT)."""
    return dump_json(prompt_json(prompt))


# The generations columns of a reply's variant ([canary]), in the order `variant_params` gives them.
VARIANT_COLUMNS = ("base_model", "reward_model_version", "n", "persona", "arm", "canary_id")


def variant_params(generation: Generation) -> tuple[Any, ...]:
    g = generation
    return (g.base_model, g.reward_model_version, g.n, g.persona, g.arm, g.canary_id)


def generation_from_row(row: NamedRow) -> Generation:
    """A Generation from a row with `prompt`, `adapter_version`, `cut` and the VARIANT_COLUMNS."""
    messages = decoded(row["prompt"]) or []
    return Generation(
        prompt=tuple(ChatMessage(item["role"], item["content"]) for item in messages),
        adapter_version=row["adapter_version"],
        cut=bool(row["cut"]),
        base_model=row["base_model"],
        reward_model_version=row["reward_model_version"],
        n=int(row["n"]),
        persona=row["persona"],
        arm="canary" if row["arm"] == "canary" else "serving",
        canary_id=row["canary_id"],
    )


def rated_from_row(row: NamedRow, dialect: Dialect) -> RatedReply:
    """A RatedReply from a row of statements.RATED_REPLIES."""
    consent = row["training_consent"]
    return RatedReply(
        turn_id=int(row["id"]),
        user_id=row["user_id"],
        created_at=dialect.moment(row["created_at"]),
        completion=row["text"],
        generation=generation_from_row(row),
        consent=None if consent is None else bool(consent),
    )


def adapter_from_row(row: NamedRow, dialect: Dialect) -> AdapterRecord:
    """An AdapterRecord from a row holding ADAPTER_COLUMNS."""
    promoted = row["promoted_at"]
    return AdapterRecord(
        version=int(row["version"]),
        scope=row["scope"],
        base_model=row["base_model"],
        path=row["path"],
        window_start=dialect.moment(row["window_start"]),
        window_end=dialect.moment(row["window_end"]),
        status=row["status"],
        created_at=dialect.moment(row["created_at"]),
        run_id=row["run_id"],
        promoted_at=None if promoted is None else dialect.moment(promoted),
        dataset=_object(row["dataset"]),
        metrics=_object(row["metrics"]),
        gate=_object(row["gate"]),
    )


def run_from_row(row: NamedRow, dialect: Dialect) -> TrainingRun:
    """A TrainingRun from a row holding RUN_COLUMNS."""
    finished, heartbeat = row["finished_at"], row["heartbeat_at"]
    return TrainingRun(
        id=int(row["id"]),
        job_key=row["job_key"],
        status=row["status"],
        started_at=dialect.moment(row["started_at"]),
        finished_at=None if finished is None else dialect.moment(finished),
        heartbeat_at=None if heartbeat is None else dialect.moment(heartbeat),
        message=row["message"],
        adapter_version=row["adapter_version"],
        steps=tuple(decoded(row["steps"]) or ()),
        result=_object(row["result"]),
    )


def snapshot_from_row(row: NamedRow) -> ExampleSnapshot:
    """An ExampleSnapshot from a row holding EXAMPLE_COLUMNS."""
    return ExampleSnapshot(
        turn_id=int(row["turn_id"]),
        user_id=row["user_id"],
        label=row["label"],
        split=row["split"],
        reward=float(row["reward"]),
        parts=_object(row["parts"]),
    )


def needles(texts: Sequence[str]) -> list[str]:
    """What a stored prompt that quotes one of `texts` contains: each text's start, once each.
    Blank texts give none (an empty needle would match every prompt)."""
    found = {text.strip()[:NEEDLE_CHARS] for text in texts}
    return sorted(needle for needle in found if needle)


def _object(value: Any) -> JSONObject:
    found = decoded(value)
    return found if isinstance(found, dict) else {}
