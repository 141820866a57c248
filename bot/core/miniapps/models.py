"""What the app store keeps: an app, its versions (each complete), and its builds."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from bot.core.models import JSONObject

BuildStatus = Literal["running", "succeeded", "failed"]
# Where a version came from: the rules alone, the model's pass over them, an edit, a restore, or a
# page a capable model wrote whole (free-form) over the spec.
SpecSource = Literal["rules", "model", "edit", "restore", "free-form"]


@dataclass(frozen=True, slots=True)
class Rendered:
    """One app as a single HTML file, with the CSP hashes of its inline script and style."""

    html: str
    script_hashes: tuple[str, ...]
    style_hashes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NewVersion:
    kind: str
    title: str
    spec: JSONObject
    rendered: Rendered
    request: str
    # sha256 of the kind and the rules' spec: an identical request finds its app by it.
    request_key: str
    source: SpecSource


@dataclass(frozen=True, slots=True)
class AppVersion:
    app_id: int
    version: int
    created_at: datetime
    body: NewVersion


@dataclass(frozen=True, slots=True)
class AppRecord:
    id: int
    owner: str
    chat_id: str
    # The link's secret (≥ 128 bits): whoever holds it may open the app and keep its state.
    token: str
    kind: str
    title: str
    version: int  # the version served (a restore can point at an older one)
    latest: int  # the highest version made
    created_at: datetime
    updated_at: datetime
    revoked: bool = False
    # The assistant turn that delivered its link last (opening the app rewards it), if stored.
    turn_id: int | None = None


@dataclass(frozen=True, slots=True)
class BuildRecord:
    key: str
    owner: str
    status: BuildStatus
    step: str
    message: str
    app_id: int | None
    started_at: datetime
    meta: dict[str, Any] = field(default_factory=dict)
