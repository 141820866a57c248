"""python-telegram-bot's HTTP transport over aiohttp (PTB's own uses httpx).

Under load the bot spends most of its CPU in the HTTP client; aiohttp's costs a fraction of httpx's
per request here (bench/telegram_load.py), and discord.py brings aiohttp anyway. PTB keeps the
protocol: it builds the request data and maps status codes to its errors; this moves bytes, and
tries a call again, for a while (`SERVER_ERROR_PATIENCE_S`), when `delivery_rule` says that
cannot repeat it: a connection that never carried the request, or a 5xx or timeout on an
idempotent call. A send that may have landed raises `MaybeDelivered` instead.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.adapters.telegram import delivery_rule
from bot.adapters.telegram.delivery_rule import MaybeDelivered, Verdict
from bot.adapters.telegram.unreadable import readable_updates

# PTB's timeout parameters: a float, None, or `BaseRequest.DEFAULT_NONE` ("not given"). Its own
# alias for this (ODVInput) lives in a private module.
TimeoutArg = float | None | object

# Uploads (/export) get longer to write than a text message.
MEDIA_WRITE_TIMEOUT_S = 20.0
# A bad spell (the Bot API unreachable, or 5xx on calls that may be repeated) is waited out this
# long before PTB sees the error: an edit or a callback answer given up after one 500 was lost
# (bench/soak.py). The long poll has the Updater's own loop.
SERVER_ERROR_PATIENCE_S = 30.0
SERVER_ERROR_RETRY_S = (0.5, 4.0)  # the first pause, and the longest


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
        read_timeout: TimeoutArg = BaseRequest.DEFAULT_NONE,
        write_timeout: TimeoutArg = BaseRequest.DEFAULT_NONE,
        connect_timeout: TimeoutArg = BaseRequest.DEFAULT_NONE,
        pool_timeout: TimeoutArg = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        deadline = time.monotonic() + self._patience_s
        pause, longest = SERVER_ERROR_RETRY_S
        api_method = delivery_rule.method_of(url)
        while True:
            status, body = 0, b""
            try:
                status, body = await self._once(
                    url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
                )
                failure: NetworkError | None = None
                verdict = delivery_rule.verdict_of_status(status)
                if verdict == "not_delivered":
                    return status, body  # PTB maps it (a 429 goes to its rate limiter)
            except _Failed as failed:
                failure, verdict = failed.error, failed.verdict
            if verdict is None:
                return status, body
            if not delivery_rule.may_retry(api_method, verdict) or time.monotonic() + pause > deadline:
                return self._given_up(api_method, verdict, failure, status, body)
            await asyncio.sleep(pause)
            pause = min(pause * 2, longest)

    @staticmethod
    def _given_up(
        api_method: str, verdict: Verdict, failure: NetworkError | None, status: int, body: bytes
    ) -> tuple[int, bytes]:
        """The last attempt's outcome for PTB; a send that may have landed becomes MaybeDelivered."""
        if verdict == "maybe_delivered" and not delivery_rule.is_idempotent(api_method):
            what = str(failure) if failure is not None else f"HTTP {status}"
            raise MaybeDelivered(f"{api_method}: maybe delivered ({what}); not sent again")
        if failure is not None:
            raise failure
        return status, body

    async def _once(
        self,
        url: str,
        method: str,
        request_data: RequestData | None,
        read_timeout: TimeoutArg,
        write_timeout: TimeoutArg,
        connect_timeout: TimeoutArg,
        pool_timeout: TimeoutArg,
    ) -> tuple[int, bytes]:
        """One attempt. Raises `_Failed` with what the failure tells about delivery."""
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
        except aiohttp.ConnectionTimeoutError as err:  # no connection in time: nothing was written
            raise _Failed(TimedOut(), "not_delivered") from err
        except aiohttp.ClientConnectorError as err:  # refused, unresolvable: nothing was written
            raise _Failed(_network_error(err), "not_delivered") from err
        except TimeoutError as err:  # written, and the answer did not come in time
            raise _Failed(TimedOut(), "maybe_delivered") from err
        except aiohttp.ClientError as err:  # written, and the connection dropped before the answer
            raise _Failed(_network_error(err), "maybe_delivered") from err
        if self._skip_unreadable and response.status == 200 and url.endswith("/getUpdates"):
            body = readable_updates(body)
        return response.status, body


class _Failed(Exception):
    def __init__(self, error: NetworkError, verdict: Verdict) -> None:
        super().__init__(str(error))
        self.error, self.verdict = error, verdict


def _network_error(err: aiohttp.ClientError) -> NetworkError:
    return NetworkError(f"aiohttp.{type(err).__name__}: {err}")


def _given(value: TimeoutArg, default: float | None) -> float | None:
    """A timeout PTB passed, or ours when it passed none (`DEFAULT_NONE`)."""
    if value is BaseRequest.DEFAULT_NONE:
        return default
    return value if value is None else float(value)  # type: ignore[arg-type]


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
