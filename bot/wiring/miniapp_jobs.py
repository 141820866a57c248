"""`kindred.miniapps.build` (the `build` queue; `kindred.apps.build` is its older name): one
mini-app, built from a person's request.

Payload: {key, owner, chat_id, request}, ids and text only. The job takes the store, reads the
person's own statements for the rules (their city, their pet), and runs `core/miniapps/build.py`. A
build that cannot be made is a result ({"ok": false, "reason": "cannot", "message"}), not an error:
retrying it would fail the same way, and the person should read why. One refused because the person
already has builds running is a result too ({"reason": "busy"}): asking again later will work.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.chat.ports import Inference
from bot.core.errors import AppBuildBusy, AppBuildError, JobError
from bot.core.jobs import JobPayload, JobRegistry
from bot.core.loading import LoadOnce
from bot.core.memory.kinds import NOT_EVIDENCE
from bot.core.miniapps.build import BUILD_JOB, BUILD_JOB_BEFORE, BuildPolicy, BuildRequest, build_app
from bot.web.miniapps.render import TemplateRenderer
from bot.wiring.job_store import StoreAccess
from bot.wiring.settings import WebSettings

MEMORIES_READ = 100
# A store away for a while (a full disk, a failover) is waited out for about a minute (2 + 4 + … +
# 32 s), well within the chat's wait for the result; bench/soak.py's full disk failed a build that
# one retry after 2 s could not save.
BUILD_RETRIES = 5
_FIELDS = ("key", "owner", "chat_id", "request")


def build_policy(web: WebSettings, generation_timeout_s: float, backend: str) -> BuildPolicy:
    """`backend`: the inference backend; free-form "auto" is on only for "openai" (a served model
    that can write a page; the bundled 135M one cannot)."""
    free_form = web.app_free_form == "on" or (web.app_free_form == "auto" and backend == "openai")
    return BuildPolicy(
        max_concurrent=web.app_builds_per_person,
        model_timeout_s=min(generation_timeout_s, BuildPolicy().model_timeout_s),
        free_form=free_form,
        free_form_timeout_s=min(generation_timeout_s, BuildPolicy().free_form_timeout_s),
        spec_pass=web.app_model_pass,
    )


def add_app_jobs(
    registry: JobRegistry,
    stores: StoreAccess,
    policy: BuildPolicy,
    inference: LoadOnce[Inference] | None,
    *,
    retries: int = BUILD_RETRIES,
) -> None:
    """Register the build job; `inference` None: the rules alone fill every spec, templates draw."""
    renderer = TemplateRenderer()
    soft_s = policy.model_timeout_s + (policy.free_form_timeout_s if policy.free_form else 0) + 30

    @registry.job(BUILD_JOB, soft_s=soft_s, hard_s=soft_s + 30, retries=retries, retry_delay_s=2)
    async def build(payload: JobPayload) -> JobPayload:
        if not all(isinstance(payload.get(name), str) for name in _FIELDS):
            raise JobError(f"{BUILD_JOB} needs {', '.join(_FIELDS)} (text)")
        request = BuildRequest(payload["key"], payload["owner"], payload["chat_id"], payload["request"])
        try:
            async with stores() as store:
                memories = await store.memories.list_memories(
                    request.owner, MEMORIES_READ, without_kinds=sorted(NOT_EVIDENCE)
                )
                built = await build_app(
                    store.miniapps,
                    renderer,
                    request,
                    [memory.text for memory in memories],
                    datetime.now(UTC),
                    policy=policy,
                    inference=None if inference is None else inference.get(),
                )
        except AppBuildBusy as exc:
            return {"ok": False, "reason": "busy", "message": str(exc)}
        except AppBuildError as exc:
            return {"ok": False, "reason": "cannot", "message": str(exc)}
        return {**built.as_payload(), "token": built.app.token, "title": built.app.title}

    registry.alias(BUILD_JOB_BEFORE, BUILD_JOB)
