"""A pytest plugin: no token, key or password that the tests use may show in what the suite captured.

The secrets are the fixtures' own (the loopback Telegram and Discord tokens, the admin password,
Telegram's webhook secret derived from the token) plus every module-level string constant of a
collected test module named like a secret (`…TOKEN`, `…PASSWORD`, `…SECRET`, `KEY`, `…API_KEY`). After each
test phase the captured log, stdout and stderr are searched for them; a hit fails that test and
names the secret by where it came from, never by its value.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable
from types import ModuleType

import pytest

# `…_KEY` alone also names people's store keys (ANN_KEY = "telegram:4242"): only API keys count.
SECRET_NAME = re.compile(r"(TOKEN|PASSWORD|SECRET)$|(^|API_|OPENAI_)KEY$")
SHORTEST = 8  # below this a "secret" would match ordinary text


def fixture_secrets() -> dict[str, str]:
    """The secrets the shared fixtures use, as {value: where it comes from}."""
    # Imported here, after collection: the plugin itself loads before the conftest's settings.
    from bot.adapters.telegram.secret import derived_webhook_secret
    from tests.support import discord_payloads, telegram_api
    from tests.support.app_web import ADMIN_PASSWORD

    token = telegram_api.DEFAULT_TOKEN
    found = {
        token: "telegram_api.DEFAULT_TOKEN",
        token.split(":", 1)[1]: "telegram_api.DEFAULT_TOKEN (its secret half)",
        derived_webhook_secret(token): "the webhook secret derived from telegram_api.DEFAULT_TOKEN",
        discord_payloads.TOKEN: "discord_payloads.TOKEN",
        ADMIN_PASSWORD: "app_web.ADMIN_PASSWORD",
    }
    return found


def module_secrets(module: ModuleType) -> dict[str, str]:
    """A test module's own secret-named string constants, as {value: where}."""
    return {
        value: f"{module.__name__}.{name}"
        for name, value in vars(module).items()
        if SECRET_NAME.search(name) and isinstance(value, str) and len(value) >= SHORTEST
    }


def leaks(secrets: dict[str, str], sections: Iterable[tuple[str, str]]) -> list[str]:
    """'where (section)' for each secret found in a captured section."""
    return [
        f"{where} (in {title})"
        for title, text in sections
        for value, where in secrets.items()
        if value in text
    ]


class SecretScan:
    def __init__(self) -> None:
        self.secrets: dict[str, str] = {}
        self.scanned = 0
        self.leaked: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.secrets.update(fixture_secrets())
        for module in {
            id(item.module): item.module for item in items if isinstance(item, pytest.Function)
        }.values():
            self.secrets.update(module_secrets(module))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, None]:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        self.scanned += 1
        found = leaks(self.secrets, report.sections)
        if found:
            self.leaked.append(f"{item.nodeid}: {'; '.join(found)}")
        if found and not report.failed:
            report.outcome = "failed"
            report.longrepr = "a secret reached the captured output: " + "; ".join(found)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.scanned == 0 and getattr(terminalreporter.config.option, "numprocesses", None):
            # The xdist controller runs no test: each worker scans its own, and a leak fails its test.
            terminalreporter.write_line("secret scan: in each test process; a leak fails its test")
            return
        leaked = f"{len(self.leaked)} leaked" if self.leaked else "none leaked"
        terminalreporter.write_line(
            f"secret scan: {len(self.secrets)} secrets sought in {self.scanned} reports' output; {leaked}"
        )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SecretScan(), "kindred-secret-scan")
