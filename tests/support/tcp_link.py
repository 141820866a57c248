"""A loopback TCP forwarder that a test can cut and restore: a real Redis (or any server) that
"goes away" for a while without stopping it for everyone else on the machine."""

from __future__ import annotations

import asyncio
import contextlib

from tests.support.started import Started


class CuttableLink(Started):
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        """Refuse new connections and drop the open ones, as a restarting server does."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    async def stop(self) -> None:
        await self.cut()

    async def restore(self) -> None:
        await self.start()  # on the same port

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._open.update((writer, up_writer))
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        self._open.discard(writer)
        writer.transport.abort()
