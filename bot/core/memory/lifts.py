"""What lifts a candidate in score fusion besides its words and its meaning: the calendar period a
question names, and the speaker it names. Each adds its weight to a candidate's fused sum
(core/memory/recall.py).

A question that names someone who speaks in the memories ("what did Melanie paint?") is mostly
answered by that person's own turns: in a dialogue between named people, dense search and BM25
both see the name (it is embedded and indexed with each of their turns, core/memory/indexing.py), but
only as one word of many, and the other person's turns that mention or address them match it as
well. A name is matched as written, as a whole word: "Will" in "Will you remind me" names Will, but
"will" does not, and a role ("user", "assistant") is no name, so a chat with Kindred is never
lifted. A question naming both speakers lifts both alike, which reorders nothing between them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from bot.core.memory.indexing import named
from bot.core.memory.when import named_period
from bot.core.models import Memory

Lift = Callable[[Memory], float]


def speakers_named(query: str, memories: Iterable[Memory]) -> frozenset[str]:
    """The names of the speakers of `memories` that `query` names, as whole words."""
    names = {name for memory in memories if (name := named(memory.speaker))}
    return frozenset(name for name in names if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", query))


def lift_for(
    query: str, candidates: Iterable[Memory], date_weight: float, speaker_weight: float
) -> Lift | None:
    """What each candidate gains for being from the period `query` names and for being said by a
    speaker it names; None when it names neither (or both weights are 0)."""
    period = named_period(query) if date_weight else None
    speakers = speakers_named(query, candidates) if speaker_weight else frozenset()
    if period is None and not speakers:
        return None

    def lift(memory: Memory) -> float:
        gained = date_weight if period is not None and period.covers(memory.created_at) else 0.0
        return gained + (speaker_weight if named(memory.speaker) in speakers else 0.0)

    return lift
