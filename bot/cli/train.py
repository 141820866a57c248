"""`kindred train …` and `kindred adapters …`: the night's dataset, a run now, and which adapter
version serves. Their JSON output is a contract (docs/learning.md)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from bot.cli import trials as cli_trials
from bot.core.errors import InvalidInput
from bot.core.learning.models import AdapterRecord
from bot.core.learning.ports import AdapterRegistry
from bot.core.learning.serving import promote, rollback
from bot.core.models import JSONObject
from bot.wiring.settings import Settings

# Persona names are at most 32 characters; a model is named as KINDRED_MODEL names it (a path too).
MAX_VARIANT_NAME = 200


def add_commands(commands: Any) -> None:
    """Register `train` and `adapters` on `kindred`'s subparsers."""
    train = commands.add_parser("train", help="nightly learning: the dataset, or a run now")
    verbs = train.add_subparsers(dest="verb", required=True)
    dataset = verbs.add_parser("dataset", help="the night's dataset statistics, without training")
    dataset.add_argument("--json", action="store_true", help="one JSON object")
    dataset.add_argument("--persona", type=variant_name, help="only the replies this persona wrote")
    dataset.add_argument(
        "--model",
        type=variant_name,
        help="only the replies this base model wrote (as KINDRED_MODEL named it)",
    )
    now = verbs.add_parser("now", help="run the nightly job here, now, and print its result")
    now.add_argument("--json", action="store_true", help="one JSON object")

    adapters = commands.add_parser(
        "adapters", help="adapter versions: list, show, promote, roll back; variants and the canary"
    )
    which = adapters.add_subparsers(dest="verb", required=True)
    listing = which.add_parser("list", help="every version, newest first")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    show = which.add_parser("show", help="one version: dataset, metrics, gate report")
    show.add_argument("version", type=version_number)
    promote_cmd = which.add_parser("promote", help="serve this version now")
    promote_cmd.add_argument("version", type=version_number)
    which.add_parser("rollback", help="serve the version before (or the base model)")
    cli_trials.add_commands(which)


def version_number(text: str) -> int:
    """A version as people write it: 3 or v3."""
    digits = text.strip().lower().removeprefix("v")
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 9:
        raise argparse.ArgumentTypeError(f"{text!r} is not a version (3 or v3)")
    return int(digits)


def variant_name(text: str) -> str:
    """A persona's or model's name as a reply's variant record keeps it (the persona's in lower case)."""
    name = text.strip()
    if not name or len(name) > MAX_VARIANT_NAME or not name.isprintable():
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a name (1 to {MAX_VARIANT_NAME} printable characters)"
        )
    return name


def _print_json(value: JSONObject) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")


async def train_dataset(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.training_jobs import dataset_summary

    summary = await dataset_summary(settings, persona=args.persona, model=args.model)
    if args.json:
        _print_json(summary)
        return 0
    examples, weights = summary["examples"], summary["weights"]
    print(
        f"window {summary['window_start']} – {summary['window_end']} ({summary['window_days']} days): "
        f"{examples['desirable']} desirable (weight {weights['desirable']:.3g}), "
        f"{examples['undesirable']} undesirable (weight {weights['undesirable']:.3g}), "
        f"from {summary['people']} people{_only(summary)}"
    )
    if summary.get("shortfall"):
        print(f"a run now would be skipped: {summary['shortfall']}")
    return 0


def _only(summary: JSONObject) -> str:
    """The filter in words, with how many rated replies it left out; empty without one."""
    only, left_out = summary["only"], summary["left_out"]
    named = [f"{key} {only[key]}" for key in ("persona", "model") if only.get(key) is not None]
    if not named:
        return ""
    return f"; only {' and '.join(named)} ({left_out['filtered']} other rated replies left out)"


async def train_now(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.training_jobs import train_here

    result = await train_here(settings)
    if args.json:
        _print_json(result)
    else:
        print(f"{result['status']}: {result.get('message', '')}")
    return 1 if result.get("status") == "busy" else 0


async def adapters_list(settings: Settings, args: argparse.Namespace) -> int:
    records = await _registry_call(settings, lambda registry: registry.list_adapters())
    if args.json:
        for record in records:
            _print_json(record_json(record))
        return 0
    if not records:
        print("no adapter versions yet: the base model serves")
    for record in records:
        print(
            f"v{record.version}  {record.status:<9}  {record.created_at:%Y-%m-%d %H:%M}  "
            f"{record.path}  {_examples(record)}"
        )
    return 0


async def adapters_show(settings: Settings, args: argparse.Namespace) -> int:
    record = await _registry_call(settings, lambda registry: registry.get_adapter(args.version))
    if record is None:
        raise InvalidInput(f"there is no adapter version {args.version}; `kindred adapters list` shows them")
    _print_json(record_json(record))
    return 0


async def adapters_promote(settings: Settings, args: argparse.Namespace) -> int:
    change = await _registry_call(
        settings, lambda registry: promote(registry, args.version, datetime.now(UTC))
    )
    print(change.describe())
    return 0


async def adapters_rollback(settings: Settings, args: argparse.Namespace) -> int:
    change = await _registry_call(settings, lambda registry: rollback(registry, datetime.now(UTC)))
    print(change.describe())
    return 0


async def _registry_call(
    settings: Settings, call: Callable[[AdapterRegistry], Coroutine[Any, Any, Any]]
) -> Any:
    from bot.wiring.backends import open_store

    store = await open_store(settings)
    try:
        return await call(store.adapters)
    finally:
        await store.close()


def _examples(record: AdapterRecord) -> str:
    examples = record.dataset.get("examples")
    if not isinstance(examples, dict):
        return ""
    return f"{examples.get('desirable', 0)}+ / {examples.get('undesirable', 0)}− examples"


def record_json(record: AdapterRecord) -> JSONObject:
    """One version as `kindred adapters list --json` and `show` print it."""
    return {
        "version": record.version,
        "status": record.status,
        "scope": record.scope,
        "path": record.path,
        "base_model": record.base_model,
        "created_at": record.created_at.isoformat(),
        "promoted_at": record.promoted_at.isoformat() if record.promoted_at else None,
        "window_start": record.window_start.isoformat(),
        "window_end": record.window_end.isoformat(),
        "run_id": record.run_id,
        "dataset": record.dataset,
        "metrics": record.metrics,
        "gate": record.gate,
    }


TRAIN_HANDLERS = {"dataset": train_dataset, "now": train_now}
ADAPTER_HANDLERS = {
    "list": adapters_list,
    "show": adapters_show,
    "promote": adapters_promote,
    "rollback": adapters_rollback,
    **cli_trials.HANDLERS,
}
