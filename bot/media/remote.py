"""What the media backends on a server share: one HTTP client per server (the key as a bearer
token, the connection given at most CONNECT_TIMEOUT_S of the whole), and the server's error text
for the log with the key taken out (a server may echo the headers it got)."""

from __future__ import annotations

import httpx

CONNECT_TIMEOUT_S = 10.0
DETAIL_CHARS = 200


def media_client(
    api_key: str | None, timeout_s: float, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = httpx.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s))
    return httpx.AsyncClient(headers=headers, timeout=timeout, transport=transport)


def logged_detail(response: httpx.Response, api_key: str | None) -> str:
    """The server's error text, without the key, at most DETAIL_CHARS long."""
    detail = response.text.strip() or response.reason_phrase
    if api_key:
        detail = detail.replace(api_key, "***")
    return detail[:DETAIL_CHARS]
