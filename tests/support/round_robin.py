"""A loopback HTTP front for several replicas: one address, each request to the next replica in
turn, as nginx's default upstream does. A replica that cannot be reached is answered 502 (nginx
would try the next one; Telegram, told 502, sends the update again, which comes to the next)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence

import aiohttp
from aiohttp import web

from tests.support.started import Started

HOP_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


class RoundRobinFront(Started):
    def __init__(self, ports: Sequence[int] | Callable[[], Sequence[int]]) -> None:
        """`ports`: the replicas' ports, or a function asked on every request (bench/soak.py's
        replicas restart on new ports)."""
        self._ports = ports if callable(ports) else (lambda: ports)
        self._turn = itertools.count()
        self.port = 0
        # Requests forwarded to each replica's port: a test sees that both took their share.
        self.forwarded: Counter[int] = Counter()
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        app = web.Application(client_max_size=1 << 20)
        app.router.add_route("*", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._http is not None:
            await self._http.close()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._http is not None
        ports = self._ports()
        port = ports[next(self._turn) % len(ports)]
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        body = await request.read()
        url = f"http://127.0.0.1:{port}{request.path_qs}"
        try:
            async with self._http.request(request.method, url, headers=headers, data=body) as answer:
                self.forwarded[port] += 1
                return web.Response(status=answer.status, body=await answer.read())
        except (aiohttp.ClientError, OSError):
            return web.Response(status=502, text="bad gateway")
