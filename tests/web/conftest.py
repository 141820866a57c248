"""What the browser tests share: one tab per test module, for the checks that need no fresh page."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser

from tests.support.browser import Watched


@pytest.fixture(scope="module")
async def shared_tab(browser: Browser) -> AsyncIterator[Watched]:
    watched = await Watched.open(browser)
    yield watched
    await watched.close()
