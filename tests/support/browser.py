"""Headless Chromium for the browser tests: Debian's `chromium` driven by Playwright.

Playwright's own browser download is never used (`scripts/test-tools.sh` installs Debian's package):
the driver launches the system binary with the flags DESIGN.md names. Each launch gets a fresh
temporary profile from Playwright, so no state leaks in from an earlier run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, ConsoleMessage, Page, ViewportSize, async_playwright, expect

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# A phone's width: what Telegram's web view shows, and small enough for the README's PNGs.
VIEWPORT: ViewportSize = {"width": 390, "height": 700}
ARTEFACTS_ENV = "KINDRED_TEST_ARTEFACTS"
# Generous: a loaded 2-core box may be slow to draw, and a wait is not a timing assertion.
expect.set_options(timeout=20_000)


def chromium_path() -> str:
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        raise RuntimeError("Debian's chromium is missing: `scripts/test-tools.sh` installs it")
    return found


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), args=list(FLAGS))
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class Watched:
    """A page and what went wrong in it: console errors and uncaught exceptions."""

    page: Page
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    @classmethod
    async def open(cls, browser: Browser) -> Watched:
        """A new page in a context of its own (no cookie, cache or credential shared)."""
        return cls.attach(await browser.new_page(viewport=VIEWPORT))

    @classmethod
    def attach(cls, page: Page) -> Watched:
        watched = cls(page)
        page.on("console", watched._console)
        page.on("pageerror", lambda error: watched.page_errors.append(str(error)))
        return watched

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)

    @property
    def problems(self) -> list[str]:
        return self.console_errors + self.page_errors

    def clear(self) -> None:
        self.console_errors.clear()
        self.page_errors.clear()

    async def close(self) -> None:
        await self.page.close()


def artefacts_dir(default: Path) -> Path:
    """Where screenshots are kept: $KINDRED_TEST_ARTEFACTS (CI keeps it), else `default`."""
    chosen = os.environ.get(ARTEFACTS_ENV)
    directory = Path(chosen) if chosen else default
    directory.mkdir(parents=True, exist_ok=True)
    return directory


async def screenshot(page: Page, directory: Path, name: str, *, full_page: bool = False) -> Path:
    """The viewport (or the whole page) as `name`.png, animations stopped so that two runs match."""
    path = directory / f"{name}.png"
    await page.screenshot(path=str(path), animations="disabled", caret="hide", full_page=full_page)
    return path


async def light_and_dark(page: Page, directory: Path, name: str) -> list[Path]:
    """`name`-light.png and `name`-dark.png: the page under each `prefers-color-scheme`."""
    paths = []
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        paths.append(await screenshot(page, directory, f"{name}-{scheme}"))
    await page.emulate_media(color_scheme="light")
    return paths
