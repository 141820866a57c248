"""Training examples in tokens: the prompt exactly as the local engine renders it, the end-of-turn
token on finished replies only, and what gives way when an example is too long."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.core.models import ChatMessage
from bot.inference.engine.local import LocalInference
from bot.training.tokens import end_of_turn_id, render_prompt, tokenize_example

MESSAGES = (
    ChatMessage("system", "You are Kindred, a warm and attentive companion."),
    ChatMessage("user", "I planted tomatoes today."),
    ChatMessage("assistant", "Lovely! Which kind?"),
    ChatMessage("user", "Cherry ones, on the balcony."),
)
REPLY = "Cherry tomatoes love a sunny balcony. Do you water them in the morning?"


@pytest.fixture(scope="module")
def engine(tiny_dir: Path) -> LocalInference:
    return LocalInference.load(tiny_dir)


@pytest.fixture(scope="module")
def tokenizer(tiny_dir: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_dir), local_files_only=True)


def test_the_prompt_is_the_one_the_local_engine_generates_from(
    engine: LocalInference, tokenizer: Any
) -> None:
    assert render_prompt(tokenizer, MESSAGES) == engine.render_prompt(MESSAGES)
    tokens = tokenize_example(tokenizer, MESSAGES, REPLY, cut=False, max_length=1024)
    engine_ids = tokenizer(engine.render_prompt(MESSAGES), add_special_tokens=False)["input_ids"]
    assert tokens.prompt_ids == engine_ids
    assert tokenizer.decode(tokens.prompt_ids).endswith("<|im_start|>assistant\n")


def test_a_finished_reply_ends_with_the_end_of_turn_token(tokenizer: Any) -> None:
    tokens = tokenize_example(tokenizer, MESSAGES, REPLY, cut=False, max_length=1024)
    assert tokens.completion_ids[-1] == end_of_turn_id(tokenizer)
    assert tokenizer.decode(tokens.completion_ids) == REPLY + "<|im_end|>"
    assert not tokens.truncated


def test_a_cut_reply_has_no_end_token_anywhere(tokenizer: Any) -> None:
    tokens = tokenize_example(tokenizer, MESSAGES, REPLY, cut=True, max_length=1024)
    assert end_of_turn_id(tokenizer) not in tokens.completion_ids
    assert tokenizer.decode(tokens.completion_ids) == REPLY


def test_a_latest_message_too_long_to_fit_loses_its_beginning_never_the_reply(tokenizer: Any) -> None:
    latest = ChatMessage("user", "Some words about my day. " * 100 + "Cherry ones, on the balcony.")
    long = (*MESSAGES[:3], latest)
    tokens = tokenize_example(tokenizer, long, REPLY, cut=False, max_length=128)
    assert tokens.truncated
    assert len(tokens.prompt_ids) + len(tokens.completion_ids) == 128
    assert tokenizer.decode(tokens.completion_ids) == REPLY + "<|im_end|>"
    assert tokenizer.decode(tokens.prompt_ids).endswith(
        "Cherry ones, on the balcony.<|im_end|>\n<|im_start|>assistant\n"
    )


def test_a_long_conversation_loses_its_oldest_turns_whole_and_keeps_the_system_message(
    tokenizer: Any,
) -> None:
    old = tuple(
        ChatMessage(role, f"Turn {i}: some words about the garden and the weather. " * 3)
        for i, role in enumerate(("user", "assistant") * 4)
    )
    messages = (MESSAGES[0], *old, *MESSAGES[1:])
    tokens = tokenize_example(tokenizer, messages, REPLY, cut=False, max_length=160)
    prompt = tokenizer.decode(tokens.prompt_ids)
    assert tokens.truncated and len(tokens.prompt_ids) + len(tokens.completion_ids) <= 160
    assert prompt.startswith("<|im_start|>system\nYou are Kindred, a warm and attentive companion.")
    assert prompt.endswith("Cherry ones, on the balcony.<|im_end|>\n<|im_start|>assistant\n")
    assert "Turn 0" not in prompt, "the oldest turn goes first"
    # What is left is whole turns: the rendering of the system message and the newest turns.
    assert any(
        render_prompt(tokenizer, (MESSAGES[0], *old[dropped:], *MESSAGES[1:])) == prompt
        for dropped in range(1, len(old) + 1)
    )
    assert tokenizer.decode(tokens.completion_ids) == REPLY + "<|im_end|>"


def test_a_reply_too_long_to_fit_is_trained_as_cut(tokenizer: Any) -> None:
    tokens = tokenize_example(tokenizer, MESSAGES, "Tomatoes. " * 200, cut=False, max_length=64)
    assert tokens.truncated and len(tokens.completion_ids) == 48
    assert end_of_turn_id(tokenizer) not in tokens.completion_ids
    assert len(tokens.prompt_ids) + len(tokens.completion_ids) == 64
