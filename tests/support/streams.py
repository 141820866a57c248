"""Reading a reply stream (`Inference.stream`) to its end in tests."""

from __future__ import annotations

from collections.abc import AsyncIterator


async def collect(chunks: AsyncIterator[str]) -> list[str]:
    """Every chunk of a stream, in order."""
    return [chunk async for chunk in chunks]


async def text_of(chunks: AsyncIterator[str]) -> str:
    """The whole reply a stream yields."""
    return "".join(await collect(chunks))
