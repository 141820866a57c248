"""The memory jobs as the product runs them: a stored turn queues `kindred.memory.extract` on the
in-process runner (real threads, a real SQLite file, the real MiniLM), and `kindred.memory.upkeep`
runs the checks and consolidation for everyone. The Celery runner runs the same registry (its
contract suite is tests/jobs/test_contract.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.errors import JobError
from bot.core.events import ReplyDone, UserMessage
from bot.core.loading import LoadOnce
from bot.core.store import Store
from bot.inference.embedders.sentence import SentenceTransformerEmbedder
from bot.jobs.inprocess import InProcessJobs
from bot.wiring.backends import open_store
from bot.wiring.jobs import extraction_submitter, job_registry
from bot.wiring.memory_jobs import EXTRACT_JOB, UPKEEP_JOB, Models
from bot.wiring.settings import GeneralSettings, MemorySettings, Settings
from tests.support.fakes import ScriptedInference
from tests.support.waiting import wait_until


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(general=GeneralSettings(data_dir=tmp_path), memory=MemorySettings(extraction_model=False))


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[Store]:
    opened = await open_store(settings)
    yield opened
    await opened.close()


def runner(settings: Settings, embedder: SentenceTransformerEmbedder) -> InProcessJobs:
    models = Models(LoadOnce(lambda: embedder), LoadOnce(lambda: ScriptedInference("[]")))
    return InProcessJobs(job_registry(settings, models), workers=2)


async def test_a_stored_turn_is_extracted_by_a_job_off_the_reply_path(
    settings: Settings, store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    jobs = runner(settings, minilm)
    conversation = Conversation(
        store, minilm, ScriptedInference("Lovely!"), ConversationPolicy(persona="p"),
        after_turn=extraction_submitter(jobs),
    )  # fmt: skip
    message = UserMessage(
        "ann", "c1", "We got a puppy today. My sister Ana is a nurse in Porto.", datetime.now(UTC)
    )
    events = [event async for event in conversation.handle_message(message)]
    assert isinstance(events[-1], ReplyDone)

    async def extracted(s: Store) -> bool:
        found = await s.memories.list_memories("ann", 20)
        return any(m.text == "My sister Ana is a nurse in Porto." for m in found)

    await wait_until(lambda: extracted(store), 20.0, what="the job's effect")
    sister = next(m for m in await store.memories.list_memories("ann", 20) if m.text.startswith("My sister"))
    turn_memory = next(
        m for m in await store.memories.list_memories("ann", 20) if m.text.startswith("We got")
    )
    assert sister.kind == "fact" and turn_memory.source_turn_id in await store.curation.memory_sources(
        sister.id
    )
    await jobs.close()


async def test_a_bad_extraction_payload_fails_once_with_a_clear_error(
    settings: Settings, minilm: SentenceTransformerEmbedder
) -> None:
    jobs = runner(settings, minilm)
    job = jobs.submit(EXTRACT_JOB, {"user_id": "ann", "memory_id": "seven"})
    with pytest.raises(JobError, match="memory_id"):
        await jobs.result(job, 30)
    await jobs.close()


async def test_nightly_upkeep_marks_past_events_and_consolidates_old_sessions(
    settings: Settings, store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    conversation = Conversation(
        store, minilm, ScriptedInference("Tell me more."), ConversationPolicy(persona="p")
    )
    long_ago = datetime.now(UTC) - timedelta(days=60)
    for minute, text in enumerate(["Morning! The train was packed", "I read half of my novel on it",
                                   "Work was slow, I fixed two bugs"]):  # fmt: skip
        message = UserMessage("bo", "c1", text, long_ago + timedelta(minutes=minute))
        [event async for event in conversation.handle_message(message)]
    jobs = runner(settings, minilm)
    extracted = jobs.submit(EXTRACT_JOB, {"user_id": "bo", "memory_id": 1})
    await jobs.result(extracted, 30)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date()
    stated = UserMessage(
        "bo", "c2", f"My exam is on {yesterday.isoformat()}", datetime.now(UTC) - timedelta(days=3)
    )
    [event async for event in conversation.handle_message(stated)]
    exam = next(m for m in await store.memories.list_memories("bo", 50) if "exam" in m.text)
    await jobs.result(jobs.submit(EXTRACT_JOB, {"user_id": "bo", "memory_id": exam.id}), 30)

    result = await jobs.result(jobs.submit(UPKEEP_JOB, {}), 120)

    assert result["people"] == 1 and result["past"] == 1 and result["summaries"] == 1
    memories = await store.memories.list_memories("bo", 50)
    assert next(m for m in memories if "exam" in m.text).status == "past"
    summary = next(m for m in memories if m.kind == "summary")
    assert "novel" in summary.text and "train" in summary.text
    covered = [m for m in memories if m.created_at < long_ago + timedelta(hours=1) and m.kind == "turn"]
    assert covered and all(m.meta["covered_by"] == summary.id for m in covered)
    # The person's turns stay recallable beside it (the replies were stored at reply time: not old).
    assert {(m.speaker, m.status) for m in covered} == {("user", "active")}
    again = await jobs.result(jobs.submit(UPKEEP_JOB, {}), 120)
    assert again["summaries"] == 0, "a consolidated session is not summarised twice"
    await jobs.close()
