"""A loopback Discord gateway (websocket) for discord.py's real client.

HELLO → IDENTIFY → READY + GUILD_CREATE, heartbeats, dispatches with sequence numbers, a
server-side drop, and RESUME on `resume_gateway_url` with the missed dispatches replayed.
Only the gateway lives here; tests/support/discord_rest.py is the REST API.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.support import discord_payloads as p

HELLO, HEARTBEAT, IDENTIFY, RESUME, DISPATCH, HEARTBEAT_ACK = 10, 1, 2, 6, 0, 11


@dataclass
class Dispatch:
    seq: int
    event: str
    data: p.Payload


@dataclass
class GatewayLog:
    """What the client did on the gateway, for assertions."""

    connections: list[str] = field(default_factory=list)  # request paths, in order
    identifies: list[p.Payload] = field(default_factory=list)
    resumes: list[p.Payload] = field(default_factory=list)
    heartbeats: int = 0


class FakeGateway:
    def __init__(self, guilds: dict[int, list[p.Payload]]) -> None:
        self.guilds = guilds
        self.log = GatewayLog()
        self.base_url = ""  # ws://127.0.0.1:PORT, set by the server once it listens
        self.session_id = ""
        self.sent: list[Dispatch] = []  # every dispatch of the session, for replay on RESUME
        self._socket: web.WebSocketResponse | None = None
        self._send_lock = asyncio.Lock()
        self.connected = asyncio.Event()

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/gateway", self.handle), web.get("/resume-gateway", self.handle)]

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.log.connections.append(request.path)
        await socket.send_json({"op": HELLO, "d": {"heartbeat_interval": 45_000}, "s": None, "t": None})
        async for frame in socket:
            if frame.type is not WSMsgType.TEXT:
                break
            await self._on_frame(socket, json.loads(frame.data))
        if self._socket is socket:
            self._socket = None
            self.connected.clear()
        return socket

    async def _on_frame(self, socket: web.WebSocketResponse, frame: p.Payload) -> None:
        op, data = frame["op"], frame.get("d")
        if op == HEARTBEAT:
            self.log.heartbeats += 1
            async with self._send_lock:
                await socket.send_json({"op": HEARTBEAT_ACK, "d": None, "s": None, "t": None})
        elif op == IDENTIFY:
            await self._identify(socket, data)
        elif op == RESUME:
            await self._resume(socket, data)

    async def _identify(self, socket: web.WebSocketResponse, data: p.Payload) -> None:
        self.log.identifies.append(data)
        if data["token"] != p.TOKEN:
            await socket.close(code=4004, message=b"Authentication failed.")
            return
        self.session_id = f"session-{p.snowflake()}"
        self.sent = []
        self._socket = socket
        self.connected.set()
        resume_url = f"{self.base_url}/resume-gateway"
        await self.dispatch("READY", p.ready(self.session_id, resume_url, list(self.guilds)))
        for guild_id, channels in self.guilds.items():
            await self.dispatch("GUILD_CREATE", p.guild_create(guild_id, channels))

    async def _resume(self, socket: web.WebSocketResponse, data: p.Payload) -> None:
        self.log.resumes.append(data)
        if data["token"] != p.TOKEN or data["session_id"] != self.session_id:
            await socket.send_json({"op": 9, "d": False, "s": None, "t": None})  # INVALID_SESSION
            return
        self._socket = socket
        missed = [item for item in self.sent if item.seq > (data["seq"] or 0)]
        for item in missed:
            await self._send(socket, item)
        await self.dispatch("RESUMED", {})
        self.connected.set()

    async def dispatch(self, event: str, data: p.Payload) -> int:
        """Send one event, or keep it for the RESUME when the client is disconnected."""
        item = Dispatch(len(self.sent) + 1, event, data)
        self.sent.append(item)
        if self._socket is not None and not self._socket.closed:
            await self._send(self._socket, item)
        return item.seq

    async def _send(self, socket: web.WebSocketResponse, item: Dispatch) -> None:
        async with self._send_lock:
            await socket.send_json({"op": DISPATCH, "d": item.data, "s": item.seq, "t": item.event})

    async def drop(self, code: int = 4000) -> None:
        """Close the connection from Discord's side, as a gateway restart does."""
        socket, self._socket = self._socket, None
        self.connected.clear()
        if socket is not None:
            await socket.close(code=code, message=b"Unknown error")

    def dispatches(self, event: str) -> list[Dispatch]:
        return [item for item in self.sent if item.event == event]

    def payload_seen(self, key: str, value: Any) -> bool:
        return any(item.data.get(key) == value for item in self.sent)
