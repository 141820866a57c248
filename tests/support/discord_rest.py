"""A loopback Discord REST API for discord.py's real HTTP client: login, application info,
command sync and the commands as Discord keeps them, channel messages (a create's `nonce` honoured
as Discord does), opening a DM, interaction callbacks and webhook follow-ups, 429s on demand,
faults after Discord acted (a 500, or no answer in time), and people who blocked the bot (50007).

It records every call and keeps each message as a person would see it (its latest text, its
buttons, its files, and when each version appeared).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support import discord_payloads as p
from tests.support.discord_gateway import FakeGateway

API = "/api/v10"
EPHEMERAL, LOADING = 64, 128
Handler = Any
BODY = web.RequestKey("kindred_body", object)
FILES = web.RequestKey("kindred_files", dict)
FAULT = web.RequestKey("kindred_fault", object)
# Discord drops a create whose nonce (with enforce_nonce) the same author used within "a few minutes".
NONCE_WINDOW_S = 300.0


def json_response(data: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """JSON as Discord sends it: discord.py parses a body only when the content type is exactly
    `application/json`, with no charset."""
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


@dataclass
class Call:
    method: str
    path: str
    status: int
    at: float
    json: p.Payload | list[Any] | None = None
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass
class Shown:
    """A message Kindred posted, as it looks now, with the time and text of every version."""

    id: int
    channel_id: int
    content: str
    flags: int = 0
    components: list[Any] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    token: str | None = None  # the interaction it answers, if any
    reference: str | None = None
    versions: list[tuple[float, str]] = field(default_factory=list)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    def custom_ids(self) -> list[str]:
        return [item["custom_id"] for row in self.components for item in row.get("components", [])]


@dataclass
class Throttle:
    method: str
    path: re.Pattern[str]
    times: int
    retry_after: float


@dataclass
class AfterDelivery:
    """A fault once Discord has acted: the message is kept, then the answer is `status`, or comes
    only after `hang_s` (past the client's patience). Not `delivered`: Discord never acts on it."""

    method: str
    path: re.Pattern[str]
    times: int
    status: int = 500
    hang_s: float = 0.0
    after: int = 0  # matching calls let through first
    delivered: bool = True


class FakeRest:
    def __init__(self, gateway: FakeGateway, guild_of: dict[int, int]) -> None:
        self.gateway = gateway
        self.guild_of = guild_of  # channel id → guild id, for the bot's own servers
        self.calls: list[Call] = []
        self.messages: dict[int, Shown] = {}
        self.deleted: list[Shown] = []
        self.commands: dict[str, list[p.Payload]] = {}  # sync route → commands as synced
        self.interactions: dict[str, p.Payload] = {}  # token → the dispatched interaction
        self.originals: dict[str, int] = {}  # token → id of the original response
        self.autocompleted: dict[str, list[p.Payload]] = {}  # token → the choices an autocomplete offered
        self.throttles: list[Throttle] = []
        self.faults: list[AfterDelivery] = []
        self.nonces: dict[str, tuple[float, int]] = {}  # nonce → (when first used, the message it made)
        self.blocked: set[int] = set()  # people (user ids) whose DMs answer 50007

    def throttle(self, method: str, path: str, *, times: int = 1, retry_after: float = 0.2) -> None:
        """Answer the next `times` matching calls with 429 and `retry_after`, as Discord does."""
        self.throttles.append(Throttle(method, re.compile(path), times, retry_after))

    def fail_after_delivery(
        self,
        method: str,
        path: str,
        *,
        times: int = 1,
        status: int = 500,
        hang_s: float = 0.0,
        after: int = 0,
    ) -> None:
        """After `after` matching calls, the next `times` are carried out, then answered with
        `status`, or (with `hang_s`) answered only that much later."""
        self.faults.append(AfterDelivery(method, re.compile(path), times, status, hang_s, after))

    def lose(self, method: str, path: str, *, hang_s: float, times: int = 1) -> None:
        """The next `times` matching calls are never carried out, and answered (500) only after
        `hang_s`: to the client, past its patience, a call that may have been delivered."""
        self.faults.append(AfterDelivery(method, re.compile(path), times, 500, hang_s, delivered=False))

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get(f"{API}/users/@me", self.me),
            web.post(f"{API}/users/@me/channels", self.open_dm),
            web.get(f"{API}/oauth2/applications/@me", self.application),
            web.get(f"{API}/applications/{{app}}/commands", self.kept_commands),
            web.get(f"{API}/applications/{{app}}/guilds/{{guild}}/commands", self.kept_commands),
            web.put(f"{API}/applications/{{app}}/commands", self.sync),
            web.put(f"{API}/applications/{{app}}/guilds/{{guild}}/commands", self.sync),
            web.post(f"{API}/channels/{{channel}}/messages", self.create_message),
            web.patch(f"{API}/channels/{{channel}}/messages/{{message}}", self.edit_message),
            web.delete(f"{API}/channels/{{channel}}/messages/{{message}}", self.delete_message),
            web.post(f"{API}/channels/{{channel}}/typing", self.typing),
            web.post(f"{API}/interactions/{{interaction}}/{{token}}/callback", self.callback),
            web.post(f"{API}/webhooks/{{app}}/{{token}}", self.followup),
            web.patch(f"{API}/webhooks/{{app}}/{{token}}/messages/{{message}}", self.edit_webhook_message),
            web.delete(f"{API}/webhooks/{{app}}/{{token}}/messages/{{message}}", self.delete_webhook_message),
        ]

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith(API):
            response: web.StreamResponse = await handler(request)
            return response
        body, files = await _read_body(request)
        request[BODY], request[FILES] = body, files
        call = Call(request.method, request.path, 200, time.monotonic(), body, files)
        self.calls.append(call)
        limited = self._throttled(request)
        if limited is not None:
            call.status = 429
            return limited
        if not self._authorized(request):
            call.status = 401
            return json_response({"message": "401: Unauthorized", "code": 0}, status=401)
        fault = self._fault(request)
        if fault is not None and not fault.delivered:
            await asyncio.sleep(fault.hang_s)
            call.status = fault.status
            return json_response({"message": "Lost on the way", "code": 0}, status=fault.status)
        response = await handler(request)
        if fault is not None and response.status < 300:
            if fault.hang_s:
                await asyncio.sleep(fault.hang_s)
            else:
                body = {"message": f"{fault.status}: Internal Server Error", "code": 0}
                response = json_response(body, status=fault.status)
        call.status = response.status
        return response

    def _fault(self, request: web.Request) -> AfterDelivery | None:
        for rule in self.faults:
            if rule.times > 0 and rule.method == request.method and rule.path.search(request.path):
                if rule.after > 0:
                    rule.after -= 1
                    continue
                rule.times -= 1
                return rule
        return None

    def _throttled(self, request: web.Request) -> web.Response | None:
        for rule in self.throttles:
            if rule.times > 0 and rule.method == request.method and rule.path.search(request.path):
                rule.times -= 1
                body = {
                    "message": "You are being rate limited.",
                    "retry_after": rule.retry_after,
                    "global": False,
                }
                headers = {
                    "Retry-After": str(rule.retry_after),
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset-After": str(rule.retry_after),
                    "X-RateLimit-Bucket": "fake-bucket",
                    "X-RateLimit-Scope": "user",
                    "Via": "1.1 google",  # discord.py treats a 429 without it as a Cloudflare ban
                }
                return json_response(body, status=429, headers=headers)
        return None

    @staticmethod
    def _authorized(request: web.Request) -> bool:
        if request.path.startswith((f"{API}/interactions/", f"{API}/webhooks/")):
            return True  # interaction tokens are their own credential
        return request.headers.get("Authorization") == f"Bot {p.TOKEN}"

    async def me(self, request: web.Request) -> web.Response:
        return json_response(p.BOT_USER)

    async def application(self, request: web.Request) -> web.Response:
        return json_response(p.app_info())

    async def kept_commands(self, request: web.Request) -> web.Response:
        return json_response(self.commands.get(request.path, []))

    async def sync(self, request: web.Request) -> web.Response:
        guild = request.match_info.get("guild")
        synced = [
            p.kept_as_discord_does(command)
            | {"id": str(p.snowflake()), "application_id": str(p.APP_ID), "version": str(p.snowflake())}
            | ({"guild_id": guild} if guild else {})
            for command in request[BODY]
        ]
        self.commands[request.path] = synced
        return json_response(synced)

    async def typing(self, request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def open_dm(self, request: web.Request) -> web.Response:
        recipient = int((request[BODY] or {})["recipient_id"])
        return json_response(p.dm_channel(p.dm_channel_of(recipient), p.user(recipient, "someone")))

    async def create_message(self, request: web.Request) -> web.Response:
        channel_id = int(request.match_info["channel"])
        if any(p.dm_channel_of(person) == channel_id for person in self.blocked):
            body = {"message": "Cannot send messages to this user", "code": 50007}
            return json_response(body, status=403)
        body = request[BODY] or {}
        nonce = str(body["nonce"]) if body.get("nonce") is not None and body.get("enforce_nonce") else None
        if nonce is not None and nonce in self.nonces:
            at, first = self.nonces[nonce]
            if time.monotonic() - at < NONCE_WINDOW_S:
                if first not in self.messages:
                    body = {"message": "A message with this nonce was deleted", "code": 50035}
                    return json_response(body, status=400)
                return json_response(self.payload(self.messages[first]))
        shown = self._new(channel_id, body, request[FILES])
        if nonce is not None:
            self.nonces[nonce] = (time.monotonic(), shown.id)
        payload = self.payload(shown)
        # Discord echoes a bot's own message back on the gateway; the bot must ignore it.
        await self.gateway.dispatch("MESSAGE_CREATE", payload)
        return json_response(payload)

    async def edit_message(self, request: web.Request) -> web.Response:
        shown = self.messages[int(request.match_info["message"])]
        self._update(shown, request[BODY] or {})
        return json_response(self.payload(shown))

    async def delete_message(self, request: web.Request) -> web.Response:
        return self._delete(int(request.match_info["message"]))

    async def delete_webhook_message(self, request: web.Request) -> web.Response:
        token, which = request.match_info["token"], request.match_info["message"]
        return self._delete(self.originals[token] if which == "@original" else int(which))

    def _delete(self, message_id: int) -> web.Response:
        shown = self.messages.pop(message_id, None)
        if shown is None:
            return json_response({"message": "Unknown Message", "code": 10008}, status=404)
        self.deleted.append(shown)
        return web.Response(status=204)

    async def callback(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        body = request[BODY] or {}
        kind, data = body["type"], body.get("data") or {}
        interaction = self.interactions[token]
        shown: Shown | None = None
        if kind in (4, 5):  # a message now, or "thinking…" to fill in later
            shown = self._new(int(interaction["channel_id"]), data, request[FILES], token=token)
            shown.flags |= LOADING if kind == 5 else 0
            self.originals[token] = shown.id
        elif kind == 8:  # an autocomplete's choices
            self.autocompleted[token] = list(data.get("choices") or [])
        elif kind == 7:  # update the message whose button was pressed
            shown = self.messages[int(interaction["message"]["id"])]
            self._update(shown, data)
            # As on Discord, that message is now the press's original response (editable by its token).
            self.originals[token] = shown.id
        answer: p.Payload = {
            "interaction": {
                "id": interaction["id"],
                "type": interaction["type"],
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(shown and shown.ephemeral),
            }
        }
        if shown is not None:
            answer["interaction"]["response_message_id"] = str(shown.id)
            answer["resource"] = {"type": kind, "message": self.payload(shown)}
        return json_response(answer)

    async def followup(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        channel_id = int(self.interactions[token]["channel_id"])
        shown = self._new(channel_id, request[BODY] or {}, request[FILES], token=token)
        return json_response(self.payload(shown))

    async def edit_webhook_message(self, request: web.Request) -> web.Response:
        token, which = request.match_info["token"], request.match_info["message"]
        shown = self.messages[self.originals[token] if which == "@original" else int(which)]
        shown.flags &= ~LOADING
        self._update(shown, request[BODY] or {})
        if request[FILES]:
            shown.files = request[FILES]
        return json_response(self.payload(shown))

    def _new(
        self, channel_id: int, body: p.Payload, files: dict[str, bytes], token: str | None = None
    ) -> Shown:
        reference = (body.get("message_reference") or {}).get("message_id")
        reference = None if reference is None else str(reference)
        content = body.get("content") or ""
        shown = Shown(p.snowflake(), channel_id, content, body.get("flags") or 0, token=token)
        shown.components, shown.files, shown.reference = body.get("components") or [], files, reference
        shown.versions.append((time.monotonic(), content))
        self.messages[shown.id] = shown
        return shown

    @staticmethod
    def _update(shown: Shown, body: p.Payload) -> None:
        if "content" in body and body["content"] is not None and body["content"] != shown.content:
            shown.content = body["content"]
            shown.versions.append((time.monotonic(), shown.content))
        if "components" in body:
            shown.components = body["components"] or []

    def payload(self, shown: Shown) -> p.Payload:
        extra: p.Payload = {"flags": shown.flags, "components": shown.components}
        extra["attachments"] = [
            {"id": str(p.snowflake()), "filename": name, "size": len(data), "url": "", "proxy_url": ""}
            for name, data in shown.files.items()
        ]
        if shown.token is not None:
            extra |= {"webhook_id": str(p.APP_ID), "application_id": str(p.APP_ID)}
        guild_id = self.guild_of.get(shown.channel_id)
        if shown.reference is not None:
            reference = {"type": 0, "message_id": shown.reference, "channel_id": str(shown.channel_id)}
            extra |= {
                "type": 19,
                "message_reference": reference | ({"guild_id": str(guild_id)} if guild_id else {}),
            }
        return p.message(shown.id, shown.channel_id, p.BOT_USER, shown.content, guild_id=guild_id, **extra)


async def _read_body(request: web.Request) -> tuple[Any, dict[str, bytes]]:
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        files = {item.filename: item.file.read() for item in form.values() if isinstance(item, web.FileField)}
        payload = form.get("payload_json")
        return (json.loads(payload) if isinstance(payload, str) else None), files
    raw = await request.read()
    return (json.loads(raw) if raw else None), {}
