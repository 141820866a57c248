"""`kindred doctor`: what this installation uses, each part OK or the reason why not, and no secret.

Exit status 0 when every configured part answers, 1 otherwise; a part that is not configured
(no REDIS_URL, no Discord token) is shown as off and fails nothing."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from bot.cli.logs import redact, redaction_order
from bot.wiring.doctor import Check, failed, run_checks
from bot.wiring.settings import Settings, secret_values

LABELS = {"ok": "OK", "fail": "FAIL", "off": "off"}


def add_command(commands: Any) -> None:
    """Register `kindred doctor` on `kindred`'s subparsers."""
    doctor = commands.add_parser(
        "doctor", help="check the store, the models, Redis, the workers and the platform tokens"
    )
    doctor.add_argument("--json", action="store_true", help="one JSON object")


async def doctor(settings: Settings, args: argparse.Namespace) -> int:
    checks = await run_checks(settings)
    # The checks never quote a secret; this is the second lock, for a driver's message that might.
    secrets = redaction_order(secret_values(settings))
    shown = [replace(check, detail=redact(check.detail, secrets)) for check in checks]
    print(as_json(shown) if args.json else as_text(shown))
    return 1 if failed(shown) else 0


def as_text(checks: Sequence[Check]) -> str:
    width = max(len(check.name) for check in checks)
    lines = [f"{check.name:<{width}}  {LABELS[check.status]:<4}  {check.detail}" for check in checks]
    problems = len(failed(checks))
    lines.append(
        f"{problems} problem{'s' if problems != 1 else ''}" if problems else "everything configured answers"
    )
    return "\n".join(lines)


def as_json(checks: Sequence[Check]) -> str:
    return json.dumps({"ok": not failed(checks), "checks": [asdict(check) for check in checks]})
