"""One mini-app build: classify the request, fill the kind's spec (rules, the person's facts, the
model's optional pass), render one HTML file, judge it, store it as a version. With free-form on
(a capable model), the model writes the page itself; a page that fails the checks, or none at all,
leaves the kind's template to draw the spec.

A follow-up ("make it dark") on the person's last app makes its next version instead. An
identical request (same kind, same rules spec) returns the app already built: no model, no render.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from bot.core.chat.ports import Inference
from bot.core.errors import AppBuildBusy, AppBuildError
from bot.core.miniapps.edits import edit_for
from bot.core.miniapps.facts import facts_from
from bot.core.miniapps.kinds import KINDS, SCHEMAS, AppKind, classify
from bot.core.miniapps.model_page import model_page
from bot.core.miniapps.model_pass import model_spec
from bot.core.miniapps.models import AppRecord, NewVersion, Rendered, SpecSource
from bot.core.miniapps.ports import AppRenderer, AppStore
from bot.core.miniapps.schema import problems
from bot.core.miniapps.specs import rule_spec

log = logging.getLogger(__name__)

BUILD_JOB = "kindred.miniapps.build"
# Its name before "miniapp" was the one word for what a person asks for: still registered, so that a
# build queued by an older Kindred runs after an upgrade.
BUILD_JOB_BEFORE = "kindred.apps.build"
TOKEN_BYTES = 24  # 192 bits: the link cannot be guessed
MAX_REQUEST_CHARS = 500
BUSY = "You already have {limit} apps building. When one is done, try again."
STEPS = {
    "understanding": "Working out what you need…",
    "filling": "Filling it in…",
    "drawing": "Drawing it…",
    "checking": "Checking it…",
    "saving": "Saving it…",
}


@dataclass(frozen=True, slots=True)
class BuildPolicy:
    max_concurrent: int = 2
    stale_after: timedelta = timedelta(minutes=10)
    # The model's pass is polish: past this the rules' spec is used (a CPU build stays well under 60 s).
    model_timeout_s: float = 20.0
    # Whether the model also writes the page itself (a capable model: KINDRED_APP_FREE_FORM), and
    # how long it may take before the template draws it (with the pass, still under 60 s).
    free_form: bool = False
    free_form_timeout_s: float = 30.0
    # Whether the model proposes the spec (KINDRED_APP_MODEL_PASS); free-form needs the model too.
    spec_pass: bool = True


@dataclass(frozen=True, slots=True)
class BuildRequest:
    key: str  # the build's idempotency key (one per /app)
    owner: str
    chat_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Built:
    app: AppRecord
    cached: bool
    source: SpecSource

    def as_payload(self) -> dict[str, Any]:
        return {"ok": True, "app_id": self.app.id, "version": self.app.version, "cached": self.cached,
                "source": self.source}  # fmt: skip


def request_key(kind: str, spec: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps([kind, spec], sort_keys=True).encode()).hexdigest()


async def build_app(
    apps: AppStore,
    renderer: AppRenderer,
    request: BuildRequest,
    memories: Sequence[str],
    now: datetime,
    *,
    policy: BuildPolicy = BuildPolicy(),
    inference: Inference | None = None,
) -> Built:
    """Build (or find) the app. Raises AppBuildError with words for the person when it cannot."""
    text = " ".join(request.text.split())[:MAX_REQUEST_CHARS]
    started = await apps.start_build(
        request.key, request.owner, now, limit=policy.max_concurrent, stale_after=policy.stale_after
    )
    if started is None:
        raise AppBuildBusy(BUSY.format(limit=policy.max_concurrent))
    painter = _Painter(renderer, policy, inference)
    try:
        built = await _build(apps, painter, request, text, memories, now, policy, inference)
    except AppBuildError as exc:
        await apps.finish_build(request.key, "failed", str(exc), now)
        raise
    except Exception as exc:
        await apps.finish_build(request.key, "failed", f"{type(exc).__name__}: {exc}", now)
        raise
    await apps.finish_build(request.key, "succeeded", "", now, app_id=built.app.id)
    return built


async def _build(
    apps: AppStore,
    painter: _Painter,
    request: BuildRequest,
    text: str,
    memories: Sequence[str],
    now: datetime,
    policy: BuildPolicy,
    inference: Inference | None,
) -> Built:
    await apps.build_step(request.key, "understanding", now)
    if not text:
        raise AppBuildError("Tell me what the app is for, for example: /app a packing list for my beach trip")
    edited = await _edited(apps, request.owner, text)
    if edited is not None:
        last, spec = edited
        return await _store(apps, painter, request, last.kind, spec, text, "edit", now, app=last)
    kind = classify(text).kind
    await apps.build_step(request.key, "filling", now)
    spec = rule_spec(kind, text, facts_from(memories), now.date())
    key = request_key(kind, spec)
    cached = await apps.find_cached(request.owner, key)
    if cached is not None:
        return Built(cached, cached=True, source="rules")
    source: SpecSource = "rules"
    if inference is not None and policy.spec_pass:
        better = await model_spec(inference, kind, text, spec, policy.model_timeout_s)
        if better is not None:
            spec, source = better, "model"
    return await _store(apps, painter, request, kind, spec, text, source, now, key=key)


async def _edited(apps: AppStore, owner: str, text: str) -> tuple[AppRecord, dict[str, Any]] | None:
    """The person's last live app and its next spec, when the request is a follow-up to it."""
    edit = edit_for(text)
    if edit is None:
        return None
    last = next((app for app in await apps.list_apps(owner, 20) if not app.revoked), None)
    if last is None or last.kind not in KINDS:  # a kind a later release dropped
        return None
    current = await apps.get_version(last.id, last.version)
    if current is None:
        return None
    spec = edit.apply(last.kind, dict(current.body.spec))
    if spec is None and not edit.explicit:
        return None  # an "add …" that fits nothing in the last app asks for a new app
    if spec is None:
        raise AppBuildError(
            f"I can't do that to “{last.title}”. Try /app make it dark, or ask for a new app."
        )
    return last, spec


@dataclass(frozen=True, slots=True)
class _Painter:
    """Draws a settled spec: the model's own page where free-form is on and it passes, else the template."""

    renderer: AppRenderer
    policy: BuildPolicy
    inference: Inference | None

    async def page(self, kind: str, spec: dict[str, Any], text: str) -> Rendered | None:
        if not self.policy.free_form or self.inference is None:
            return None
        page = await model_page(self.inference, kind, text, spec, self.policy.free_form_timeout_s)
        if page is None:
            return None
        adopted, found = self.renderer.free_form(spec, page, [text])
        if found or adopted is None:
            log.info("the model's page was refused, the template draws the app: %s", found[:3])
            return None
        return adopted

    def template(self, kind: str, spec: dict[str, Any]) -> Rendered:
        rendered = self.renderer.render(kind, spec)
        found = self.renderer.problems(rendered)
        if found:
            log.warning("a rendered app failed its checks: %s", found[:3])
            raise AppBuildError("The app I drew did not pass my safety checks, so I did not publish it.")
        return rendered


async def _store(
    apps: AppStore,
    painter: _Painter,
    request: BuildRequest,
    kind: str,
    spec: dict[str, Any],
    text: str,
    source: SpecSource,
    now: datetime,
    *,
    app: AppRecord | None = None,
    key: str | None = None,
) -> Built:
    wrong = problems(spec, SCHEMAS[cast(AppKind, kind)])
    if wrong:
        log.info("app spec refused: %s", wrong[:3])
        raise AppBuildError("That would make the app too big or leave it incomplete, so I kept it as it was.")
    await apps.build_step(request.key, "drawing", now)
    rendered = await painter.page(kind, spec, text)
    await apps.build_step(request.key, "checking", now)
    if rendered is None:
        rendered = painter.template(kind, spec)
    else:
        source = "free-form"
    await apps.build_step(request.key, "saving", now)
    key = key or request_key(kind, spec)
    version = NewVersion(kind, str(spec["title"]), spec, rendered, text, key, source)
    if app is not None:
        return Built(await apps.add_version(app.id, version, now), cached=False, source=source)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    created = await apps.create_app(request.owner, request.chat_id, token, version, now)
    return Built(created, cached=False, source=source)
