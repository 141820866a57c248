"""A job waited for while its steps are shown in the chat, as mini-app builds show theirs: the
runner's progress (`JobProgress`: Celery's PROGRESS state, or the in-process runner's) put in
words and shown each time they change. Used for long documents and long voice notes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bot.core.jobs import JobId, JobPayload, JobProgress, Jobs
from bot.core.media.ports import Show

# How often a chat looks at a job's progress.
PROGRESS_POLL_S = 1.0
# A job's progress in words for the person; None: nothing to show for it.
StepWords = Callable[[JobPayload | None], str | None]


async def followed(
    jobs: Jobs,
    job_id: JobId,
    timeout_s: float,
    show: Show,
    words: StepWords,
    *,
    poll_s: float = PROGRESS_POLL_S,
) -> JobPayload:
    """The job's result (as `Jobs.result` raises), its steps shown while it runs."""
    waiting = asyncio.ensure_future(jobs.result(job_id, timeout_s))
    shown = ""
    try:
        while not waiting.done():
            await asyncio.wait({waiting}, timeout=poll_s)
            if waiting.done() or not isinstance(jobs, JobProgress):
                continue
            step = words(await jobs.progress(job_id))
            if step is not None and step != shown:
                shown = step
                await show(step)
    finally:
        if not waiting.done():
            waiting.cancel()
    return waiting.result()
