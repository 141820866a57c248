"""One address in front of the bot's replicas, as a load balancer would be: each webhook POST goes
to the next replica in turn. A replica that does not answer gets a 502 back to the sender (the
fake Bot API then retries, as Telegram does), never a silent drop."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import aiohttp
from aiohttp import web

FORWARD_TIMEOUT_S = 30.0
PASSED_HEADERS = ("Content-Type", "X-Telegram-Bot-Api-Secret-Token")


class RoundRobinFront:
    def __init__(self, ports: Callable[[], list[int]]) -> None:
        self._ports = ports
        self._turn = itertools.count()
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.forwarded = 0
        self.unanswered = 0

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=FORWARD_TIMEOUT_S))
        app = web.Application()
        app.router.add_route("POST", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        ports = self._ports()
        port = ports[next(self._turn) % len(ports)]
        headers = {name: request.headers[name] for name in PASSED_HEADERS if name in request.headers}
        body = await request.read()
        try:
            async with self._session.post(
                f"http://127.0.0.1:{port}{request.path}", data=body, headers=headers
            ) as answer:
                text = await answer.text()
                self.forwarded += 1
                return web.Response(status=answer.status, text=text)
        except (aiohttp.ClientError, TimeoutError):
            self.unanswered += 1
            return web.Response(status=502, text="bad gateway")
