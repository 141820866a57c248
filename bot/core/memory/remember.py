"""After an exchange: what the person said becomes lasting memories (`remember_turn`).

Run as a job (`kindred.memory.extract`), never on the reply's path. For one stored user turn:
1. Contradictions: older memories its statement makes untrue are superseded by the turn's memory,
   and an older summary loses the sentences it makes untrue (`contradiction.py`, `slots.py`).
2. Candidates: rules, plus the model when one is given (`extraction.py`), validated.
3. Each candidate is stored unless a near-duplicate exists: then that older memory takes the new
   wording (and the turn as a source) instead of a twin being made. Every extracted memory links
   to the turn it came from. A pinned one ("remember that …") is never consolidated away.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from bot.core.chat.ports import Inference
from bot.core.errors import InferenceError
from bot.core.memory import contradiction, extraction
from bot.core.memory.curation import CurationStore, revise_summary, supersede
from bot.core.memory.ports import Embedder
from bot.core.models import Memory, NewMemory, Revision, Vector
from bot.core.text import EMBED_CHARS, query_terms

log = logging.getLogger(__name__)

# Cosine similarity (MiniLM) past which two statements say the same thing. Measured on the scenario
# pairs: restatements score 0.86–0.97, different tastes on one topic ("I like tea" / "I like
# coffee") 0.55–0.80.
DUPLICATE_SIMILARITY = 0.85
DUPLICATE_FETCH = 8
CONTRADICTION_FETCH = 200
CONTRADICTION_NEAREST = 40
STATEMENT_KINDS = frozenset({"preference", "fact", "event"})


@dataclass(slots=True)
class Remembered:
    """What one turn changed, for the job's result and the tests."""

    added: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    superseded: list[int] = field(default_factory=list)
    revised: list[int] = field(default_factory=list)  # summaries that lost an untrue sentence

    def as_payload(self) -> dict[str, object]:
        return {
            "added": self.added, "updated": self.updated, "superseded": self.superseded,
            "revised": self.revised,
        }  # fmt: skip


async def remember_turn(
    store: CurationStore,
    embedder: Embedder,
    user_id: str,
    memory_id: int,
    now: datetime,
    *,
    inference: Inference | None = None,
) -> Remembered:
    """Extract, deduplicate and contradict for the turn whose memory is `memory_id`."""
    done = Remembered()
    found = await store.curation.get_memories(user_id, [memory_id])
    if not found or found[0].speaker != "user" or not found[0].recallable:
        return done  # forgotten meanwhile, an assistant turn, or already folded into another
    turn_memory = found[0]
    await _contradict(store, embedder, turn_memory, now, done)
    candidates = extraction.rule_candidates(turn_memory.text, turn_memory.created_at.date())
    if inference is not None:
        candidates = extraction.combine(candidates, await _model_candidates(inference, turn_memory.text))
    for candidate in candidates:
        await _keep(store, embedder, turn_memory, candidate, now, done)
    return done


async def _model_candidates(inference: Inference, text: str) -> list[extraction.Candidate]:
    try:
        return await extraction.model_candidates(inference, text)
    except InferenceError as exc:
        log.info("model extraction skipped: %s", exc)  # the rules' candidates still count
        return []


async def _contradict(
    store: CurationStore, embedder: Embedder, statement: Memory, now: datetime, done: Remembered
) -> None:
    """Supersede what `statement` makes untrue, and drop those sentences from older summaries."""
    found = contradiction.detect(statement.text)
    if found is None:
        return
    terms = contradiction.search_terms(found) + query_terms(statement.text)
    candidates = {hit.memory.id: hit.memory for hit in await store.memories.lexical_search(
        statement.user_id, list(dict.fromkeys(terms)), CONTRADICTION_FETCH
    )}  # fmt: skip
    # The same attribute in other words ("I'm a heavy smoker" for "I quit smoking"): by meaning.
    vector = (await embedder.embed([statement.text[:EMBED_CHARS]]))[0]
    for hit in await store.memories.dense_search(statement.user_id, vector, CONTRADICTION_NEAREST):
        candidates.setdefault(hit.memory.id, hit.memory)
    older = sorted(candidates.values(), key=lambda m: m.id)
    untrue = [memory.id for memory in older if contradiction.contradicts(found, statement, memory)]
    if untrue:
        log.info("memory %d supersedes %s", statement.id, untrue)
    done.superseded = await supersede(store, statement.user_id, untrue, statement.id, now)
    summaries = [
        m for m in older if m.kind == "summary" and m.recallable and m.created_at <= statement.created_at
    ]
    for summary in summaries:
        if await revise_summary(store, embedder, summary, found, statement.id, now):
            done.revised.append(summary.id)


async def _keep(
    store: CurationStore,
    embedder: Embedder,
    turn_memory: Memory,
    candidate: extraction.Candidate,
    now: datetime,
    done: Remembered,
) -> None:
    user_id = turn_memory.user_id
    meta = {**turn_memory.meta, "extracted_by": candidate.source}
    if candidate.event_date is not None:
        meta["event_date"] = candidate.event_date.isoformat()
    vector = (await embedder.embed([candidate.text[:EMBED_CHARS]]))[0]
    twin = await _near_duplicate(store, user_id, vector, candidate.text, exclude=turn_memory.id)
    turn_id = turn_memory.source_turn_id
    if twin is not None:
        revision = Revision(
            text=candidate.text, embedding=vector, kind=candidate.kind, meta={**twin.meta, **meta},
            pinned=twin.pinned or candidate.pinned or None, updated_at=now,
        )  # fmt: skip
        await store.curation.revise_memory(user_id, twin.id, revision)
        if turn_id is not None:
            await store.curation.link_sources(twin.id, [turn_id])
        if candidate.whole:  # the turn's own memory would be the twin: fold it into the older one
            await supersede(store, user_id, [turn_memory.id], twin.id, now, status="merged")
        done.updated.append(twin.id)
        return
    if candidate.whole:
        # The message is the statement: its own memory is the extracted one, no copy needed.
        revision = Revision(kind=candidate.kind, meta=meta, pinned=candidate.pinned or None)
        await store.curation.revise_memory(user_id, turn_memory.id, revision)
        done.updated.append(turn_memory.id)
        return
    new = NewMemory(
        user_id, candidate.text, "user", turn_memory.created_at, vector, embedder.model_name,
        candidate.kind, meta,
    )  # fmt: skip
    (new_id,) = await store.memories.add_memories([new])
    if candidate.pinned:
        await store.curation.revise_memory(user_id, new_id, Revision(pinned=True))
    if turn_id is not None:
        await store.curation.link_sources(new_id, [turn_id])
    done.added.append(new_id)


async def _near_duplicate(
    store: CurationStore, user_id: str, vector: Vector, text: str, *, exclude: int
) -> Memory | None:
    """An earlier statement of the person that says the same as `text` (same polarity)."""
    says_no = contradiction.negated(text)
    for hit in await store.memories.dense_search(user_id, vector, DUPLICATE_FETCH):
        memory = hit.memory
        if hit.score < DUPLICATE_SIMILARITY:
            break
        if memory.id == exclude or memory.speaker != "user" or memory.kind not in STATEMENT_KINDS:
            continue
        if contradiction.negated(memory.text) == says_no:
            return memory
    return None
