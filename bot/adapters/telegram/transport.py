"""python-telegram-bot's HTTP transport over aiohttp (PTB's own uses httpx).

Under load the bot spends most of its CPU in the HTTP client; aiohttp's costs a fraction of httpx's
per request here (bench/telegram_load.py), and discord.py brings aiohttp anyway. PTB keeps the
protocol: it builds the request data and maps status codes to its errors; this moves bytes, and
tries a call again while the Bot API answers 5xx (`SERVER_ERROR_PATIENCE_S`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.adapters.telegram.unreadable import readable_updates

# Uploads (/export) get longer to write than a text message.
MEDIA_WRITE_TIMEOUT_S = 20.0
# A 5xx is the Bot API (or a proxy before it) answering that the call failed, so trying again does
# not repeat it; a bad spell there is waited out this long before PTB sees the error (a reply, an
# app link or a reminder given up after one 500 was lost: bench/soak.py). A timeout is never tried
# again here: the call may have landed. The long poll has the Updater's own loop.
SERVER_ERROR_PATIENCE_S = 30.0
SERVER_ERROR_RETRY_S = (0.5, 4.0)  # the first pause, and the longest
NOT_RETRIED = frozenset({"getUpdates"})


class AiohttpRequest(BaseRequest):
    def __init__(
        self,
        connections: int,
        *,
        read_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        skip_unreadable_updates: bool = False,
        server_error_patience_s: float = SERVER_ERROR_PATIENCE_S,
    ) -> None:
        """`skip_unreadable_updates`: for the long poll, getUpdates answers lose the updates PTB
        cannot read (unreadable.py), which would otherwise stop polling for good."""
        self._connections = connections
        self._skip_unreadable = skip_unreadable_updates
        self._read_timeout = read_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._patience_s = server_error_patience_s
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._connections),
                headers={"User-Agent": self.USER_AGENT},
            )

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        deadline = time.monotonic() + self._patience_s
        pause, longest = SERVER_ERROR_RETRY_S
        retried = url.rsplit("/", 1)[-1] not in NOT_RETRIED
        while True:
            status, body = await self._once(
                url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
            )
            if status < 500 or not retried or time.monotonic() + pause > deadline:
                return status, body
            await asyncio.sleep(pause)
            pause = min(pause * 2, longest)

    async def _once(
        self,
        url: str,
        method: str,
        request_data: RequestData | None,
        read_timeout: ODVInput[float],
        write_timeout: ODVInput[float],
        connect_timeout: ODVInput[float],
        pool_timeout: ODVInput[float],
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("AiohttpRequest is not initialized")
        files = request_data.multipart_data if request_data else None
        read = _given(read_timeout, self._read_timeout)
        write = _given(write_timeout, MEDIA_WRITE_TIMEOUT_S if files else self._read_timeout)
        connect = _given(connect_timeout, self._connect_timeout)
        pool = _given(pool_timeout, self._pool_timeout)
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=None if connect is None and pool is None else (connect or 0) + (pool or 0),
            sock_read=max(filter(None, (read, write)), default=None),
        )
        try:
            async with self._session.request(
                method, url, data=_body(request_data, files), timeout=timeout
            ) as response:
                body = await response.read()
        except TimeoutError as err:
            raise TimedOut from err
        except aiohttp.ClientError as err:
            raise NetworkError(f"aiohttp.{type(err).__name__}: {err}") from err
        if self._skip_unreadable and response.status == 200 and url.endswith("/getUpdates"):
            body = readable_updates(body)
        return response.status, body


def _given(value: ODVInput[float], default: float | None) -> float | None:
    return default if isinstance(value, DefaultValue) else value


def _body(request_data: RequestData | None, files: dict[str, Any] | None) -> Any:
    if request_data is None:
        return None
    fields = request_data.json_parameters
    if not files:
        return fields  # a url-encoded form, as PTB sends it
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    for name, upload in files.items():
        filename, content, mime = upload if len(upload) == 3 else (upload[0], upload[1], None)
        form.add_field(name, content, filename=filename, content_type=mime)
    return form
