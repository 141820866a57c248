"""Hypothesis strategies for hostile input, shared by the fuzz tests: texts with zero-width, RTL
and control characters, NUL, lone surrogates and huge runs; commands with odd arguments; and any
JSON value, to put where a field of another type belongs."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Zero-width space/joiners, BOM, word joiner; RTL/LTR marks, embeddings, overrides and isolates.
INVISIBLE = "\u200b\u200c\u200d\ufeff\u2060\u00ad"
BIDI = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c"
CONTROL = "\x00\x01\x07\x08\x0b\x0c\x1b\x7f\x85\x9f\r"
ODD = "\ud800\udfff\U0001f600\u0301\u0e33\ufdfd\uffff"  # lone surrogates, emoji, combining, wide
HUGE_CHARS = 120_000  # past every limit: a message's 4,096 and an import line's 100,000

pieces = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=INVISIBLE + BIDI + CONTROL + ODD + " \n\t", max_size=12),
    st.sampled_from(["hello", "שלום", "مرحبا", "/start", "@kindred_test_bot", "I live in Oslo", "4471"]),
)
texts = st.lists(pieces, max_size=6).map("".join)
huge_texts = st.tuples(st.sampled_from(["a", "word ", "\u200b", "😀", "ab\u202e"]), st.integers(1, 3)).map(
    lambda spec: spec[0] * (HUGE_CHARS * spec[1] // len(spec[0]))
)
hostile_texts = st.one_of(*[texts] * 14, huge_texts)  # one huge text in fifteen: each costs ~10 ms

COMMANDS = ("start", "help", "memories", "forget", "confirm", "correct", "export", "privacy", "app", "apps",
            "train_now", "rollback", "nosuchcommand")  # fmt: skip
odd_arguments = st.one_of(
    st.just(""),
    st.sampled_from(
        ["all", "ALL", "0", "-1", "²", "99999999999999999999999", "1e9", "١٢", "1 2 3", "training"]
    ),
    texts,
)
commands = st.tuples(st.sampled_from(COMMANDS), st.sampled_from(["", "@kindred_test_bot", "@someone_else"]),
                     odd_arguments).map(lambda c: f"/{c[0]}{c[1]} {c[2]}".rstrip())  # fmt: skip

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
