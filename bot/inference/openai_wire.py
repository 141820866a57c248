"""What an OpenAI-compatible server sends back, read once: the lines of a streamed chat completion
(server-sent events), a whole completion's choices, and the text of an error.

Anything that is not what the API promises becomes InferenceError naming the server; the caller
(`openai_compat.py`) maps statuses and transport errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import httpx

from bot.core.errors import InferenceError
from bot.core.models import EndReason, Sampled

# How much of a server's error text goes into a message.
DETAIL_CHARS = 200
# A server that does not answer the connection within this is down; the whole request may take longer.
CONNECT_TIMEOUT_S = 10.0
DONE = object()


def api_client(
    api_key: str | None, timeout_s: float, transport: httpx.AsyncBaseTransport | None, **options: Any
) -> httpx.AsyncClient:
    """A client for one OpenAI-compatible server (chat, embeddings, speech): the key as a bearer
    token when there is one, and the connection given at most CONNECT_TIMEOUT_S of `timeout_s`."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = httpx.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s))
    return httpx.AsyncClient(headers=headers, timeout=timeout, transport=transport, **options)


@dataclass(frozen=True, slots=True)
class Delta:
    text: str
    finished: bool
    reason: EndReason | None = None  # the finish_reason, when it is one the port knows
    # (prompt, completion) tokens: the last chunk's `usage`, sent when `include_usage` was asked.
    usage: tuple[int, int] | None = None


def parse_sse_line(line: str, server: str) -> Delta | object | None:
    """One line of the event stream: a text delta, DONE, or None for lines that carry nothing.

    Raises InferenceError for a line that is not server-sent events, or an error event.
    """
    line = line.rstrip("\r")
    if not line or line.startswith(":"):
        return None  # event separator or comment (keep-alive)
    field, _, value = line.partition(":")
    value = value.removeprefix(" ")
    if field in ("event", "id", "retry"):
        return None
    if field != "data":
        raise InferenceError(
            f"the OpenAI-compatible server at {server} sent a malformed stream line: {line[:80]!r}"
        )
    if value.strip() == "[DONE]":
        return DONE
    try:
        payload = json.loads(value)
        if "error" in payload:
            raise InferenceError(
                f"the OpenAI-compatible server at {server} failed mid-reply: {message_of(payload)}"
            )
        choice = payload["choices"][0] if payload["choices"] else {}
        text = (choice.get("delta") or {}).get("content") or ""
        if not isinstance(text, str):
            raise TypeError("content is not text")
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise InferenceError(
            f"the OpenAI-compatible server at {server} sent a malformed stream line: {line[:80]!r}"
        ) from exc
    finish = choice.get("finish_reason")
    reason = finish if finish in ("stop", "length") else None
    return Delta(text, finish is not None, reason, usage_of(payload))


def usage_of(payload: Any) -> tuple[int, int] | None:
    """A response's `usage` as (prompt, completion) tokens; None when it has none or it is not numbers."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int) or prompt < 0 or completion < 0:
        return None
    return prompt, completion


def parse_choices(response: httpx.Response, server: str) -> list[Sampled]:
    """The choices of a whole (non-streamed) chat completion, in their `index` order; a choice whose
    `finish_reason` is "length" is cut. At least one, or InferenceError."""
    try:
        payload = response.json()
        if "error" in payload:
            raise InferenceError(f"the OpenAI-compatible server at {server} failed: {message_of(payload)}")
        found: list[tuple[int, Sampled]] = []
        for place, choice in enumerate(payload["choices"]):
            text = (choice.get("message") or {}).get("content") or ""
            if not isinstance(text, str):
                raise TypeError("content is not text")
            index = choice.get("index", place)
            found.append(
                (
                    index if isinstance(index, int) else place,
                    Sampled(text, choice.get("finish_reason") == "length"),
                )
            )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InferenceError(
            f"the OpenAI-compatible server at {server} sent a malformed completion: {response.text[:80]!r}"
        ) from exc
    if not found:
        raise InferenceError(f"the OpenAI-compatible server at {server} sent a completion with no choices")
    ordered = [sampled for _, sampled in sorted(found, key=lambda pair: pair[0])]
    usage = usage_of(payload)
    if usage is None:
        return ordered
    # One usage for all the choices: on the first, so that the candidates sum to it (models.Sampled).
    first, *rest = ordered
    return [replace(first, tokens_in=usage[0], tokens_out=usage[1]),
            *(replace(other, tokens_in=0, tokens_out=0) for other in rest)]  # fmt: skip


def error_detail(response: httpx.Response) -> str:
    try:
        return message_of(response.json())
    except ValueError:
        return response.text[:DETAIL_CHARS].strip() or response.reason_phrase


def message_of(payload: Any) -> str:
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    message = error.get("message", error) if isinstance(error, dict) else error
    return str(message)[:DETAIL_CHARS]
