"""A training example in tokens, exactly as the local engine saw its prompt.

The prompt is rendered by the tokenizer's chat template with the assistant's turn opened, and
tokenized without special tokens added (`bot/inference/engine/local.py` does the same; the template
writes its own markers). The completion is what follows: a finished reply ends with the
end-of-turn token, the one generation stops at; a reply cut at its token budget has none, so
that training never teaches the model to stop where it was only cut off.

The trainer and the scorer both tokenize here, so an implicit reward is measured on the very
tokens that were trained. Only a tokenizer object is needed (no torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.chat.quoting import markers_of, template_messages
from bot.core.models import ChatMessage

# When prompt and completion do not fit in max_length, the completion keeps at least this share
# of it. The prompt first loses its oldest turns, whole, as `core/prompt.build_messages` drops
# them: the system message (persona and memories) and the latest message stay, so the model
# trains in the context it answers in. Only what still does not fit loses its beginning.
MAX_COMPLETION_SHARE = 0.75


@dataclass(frozen=True, slots=True)
class Tokenized:
    prompt_ids: list[int]
    completion_ids: list[int]
    # The prompt lost its beginning or the completion its end to fit max_length.
    truncated: bool


def render_prompt(tokenizer: Any, messages: Sequence[ChatMessage]) -> str:
    """The prompt text the local engine generates from, ending with the assistant's turn opening."""
    # Markers a message spells are broken as the engine breaks them (core/chat/quoting.py).
    markers = markers_of(tokenizer.get_added_vocab())
    rendered = tokenizer.apply_chat_template(
        template_messages(messages, markers), add_generation_prompt=True, tokenize=False
    )
    return str(rendered)


def end_of_turn_id(tokenizer: Any) -> int:
    """The token a finished reply ends with (SmolLM2: `<|im_end|>`, its eos token)."""
    if tokenizer.eos_token_id is None:
        raise ValueError("the tokenizer names no end-of-turn (eos) token")
    return int(tokenizer.eos_token_id)


def tokenize_example(
    tokenizer: Any, messages: Sequence[ChatMessage], completion: str, *, cut: bool, max_length: int
) -> Tokenized:
    """Prompt and completion tokens, at most `max_length` together (see MAX_COMPLETION_SHARE)."""
    kept = list(messages)
    prompt_ids, completion_ids = _split(tokenizer, kept, completion, cut=cut)
    room = int(max_length * MAX_COMPLETION_SHARE)
    truncated = False
    if len(completion_ids) > room:
        completion_ids = completion_ids[:room]  # no end token any more: it is cut now
        truncated = True
    keep = max_length - len(completion_ids)
    # The oldest turn after the system message, while more than the latest message is left.
    first = 1 if kept and kept[0].role == "system" else 0
    while len(prompt_ids) > keep and len(kept) - first > 1:
        del kept[first]
        prompt_ids = _split(tokenizer, kept, completion, cut=cut)[0]
        truncated = True
    if len(prompt_ids) > keep:
        prompt_ids = prompt_ids[len(prompt_ids) - keep :]
        truncated = True
    return Tokenized(prompt_ids, completion_ids, truncated)


def _split(
    tokenizer: Any, messages: Sequence[ChatMessage], completion: str, *, cut: bool
) -> tuple[list[int], list[int]]:
    prompt = render_prompt(tokenizer, messages)
    prompt_ids = _encode(tokenizer, prompt)
    full_ids = _encode(tokenizer, prompt + completion)
    # Tokens can merge across the boundary; the completion starts where the two diverge, as TRL does.
    start = _common_prefix(prompt_ids, full_ids)
    prompt_ids, completion_ids = prompt_ids[:start], full_ids[start:]
    if not cut:
        completion_ids.append(end_of_turn_id(tokenizer))
    return prompt_ids, completion_ids


def _encode(tokenizer: Any, text: str) -> list[int]:
    return [int(i) for i in tokenizer(text, add_special_tokens=False)["input_ids"]]


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
