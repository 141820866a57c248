"""What is searched of an imported memory besides its own words: who said it, and what came before.

A named speaker's turn is embedded and indexed as "Melanie: I painted a sunrise", so that "what did
Melanie paint?" finds it. A turn answers the one before it ("Wow, that's great!", or "A sunrise, by
the lake" after "What did you paint?"), so a turn of up to SHORT_TURN_WORDS words is also searched
with the turn before it, but only in a dialogue between named people: there both turns are a
person's words. In a chat with Kindred ("user"/"assistant") the turn before a person's is mostly
the bot's reply, which is no evidence about them, and a file with no speakers is a list of notes,
not a dialogue. The memory's text stays as it was said: only `context` and the embedded text carry
the rest. Each rule is measured in bench/recall.py (docs/benchmarks.md, "Recall").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Roles, not names: "user: ..." or "assistant: ..." would only add the same word to every memory.
ROLES = frozenset({"user", "assistant"})
# A turn of at most this many words is searched with the turn before it (0: never). On LoCoMo's dev
# half alone in a store (with the speaker rule of core/memory/lifts.py), 12, 20, 30 and 50 words found
# 0.710, 0.722, 0.736 and 0.747 of the evidence at k=10, and every turn 0.755. Not every turn: the
# turn before comes first in what is embedded, and MiniLM reads only 256 word pieces, so a long turn
# after a long one would lose its own words.
SHORT_TURN_WORDS = 50


@dataclass(frozen=True, slots=True)
class Indexing:
    speakers: bool = True
    short_turn_words: int = SHORT_TURN_WORDS


SHIPPED_INDEXING = Indexing()


@dataclass(frozen=True, slots=True)
class Said:
    text: str
    speaker: str | None


@dataclass(frozen=True, slots=True)
class Searched:
    embedded: str  # what the embedder reads
    context: str  # words indexed beside the text


def named(speaker: str | None) -> str | None:
    """The speaker's name when it is one, not a role."""
    name = (speaker or "").strip()
    return name if name and name.lower() not in ROLES else None


def attributed(said: Said, indexing: Indexing) -> str:
    name = named(said.speaker) if indexing.speakers else None
    return f"{name}: {said.text}" if name else said.text


def searched(turns: Sequence[Said], indexing: Indexing = SHIPPED_INDEXING) -> list[Searched]:
    """For each turn in conversation order, what is embedded and what is indexed beside it."""
    out: list[Searched] = []
    for position, said in enumerate(turns):
        name = named(said.speaker) if indexing.speakers else None
        context = [name] if name else []
        embedded = attributed(said, indexing)
        if position and _answers(turns[position - 1], said, indexing):
            before = attributed(turns[position - 1], indexing)
            context.append(before)
            embedded = f"{before}\n{embedded}"
        out.append(Searched(embedded, "\n".join(context)))
    return out


def _answers(before: Said, said: Said, indexing: Indexing) -> bool:
    """Whether `said` is a short turn of a dialogue between named people, replying to `before`."""
    in_dialogue = named(said.speaker) is not None and named(before.speaker) is not None
    return in_dialogue and len(said.text.split()) <= indexing.short_turn_words
