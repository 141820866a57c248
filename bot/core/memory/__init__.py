"""Memory ([memory]): what a person said becomes lasting memories; recall, scoring, revision and the
controls a person has over what is kept."""

from bot.core.memory.kinds import NOT_EVIDENCE, REPLY, classify
from bot.core.memory.recall import (
    MEMORY_DELIMITERS,
    Recalled,
    distinct,
    document_source,
    fit_budget,
    hybrid_search,
    memory_line,
)
from bot.core.memory.scoring import Scoring, shares

# The memory room's public surface for the other rooms, beside its ports and models.
__all__ = [
    "MEMORY_DELIMITERS",
    "NOT_EVIDENCE",
    "REPLY",
    "Recalled",
    "Scoring",
    "classify",
    "distinct",
    "document_source",
    "fit_budget",
    "hybrid_search",
    "memory_line",
    "shares",
]
