"""No module under bot/ imports a private part of an SDK: a `_`-prefixed submodule of any of them
(`telegram._utils`, `aiohttp._http_parser`...), or discord.py's internals (`discord.http`,
`discord.state`, `discord.gateway`). Private parts change without notice between releases.

Where one is truly needed it is listed in ALLOWED with the version it is pinned to and the test
that covers that exact behaviour; an entry that no longer imports it fails, so none stays behind."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SDKS = frozenset(
    "telegram discord celery kombu aiohttp httpx redis psycopg psycopg_pool aiosqlite "
    "flower billiard numpy torch transformers peft trl onnxruntime sentence_transformers".split()
)
INTERNAL = frozenset({"discord.http", "discord.state", "discord.gateway"})
# (module, what it imports) → the pinned version, and the test of that exact behaviour.
# None today: the Discord messenger left discord.http for discord.py's public Client.
ALLOWED: dict[tuple[str, str], str] = {}


def is_private(module: str) -> bool:
    parts = module.split(".")
    if parts[0] not in SDKS:
        return False
    return any(part.startswith("_") for part in parts[1:]) or any(
        module == internal or module.startswith(internal + ".") for internal in INTERNAL
    )


def imported(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            if not is_private(node.module):  # `from discord import http` imports the submodule
                yield from (f"{node.module}.{alias.name}" for alias in node.names)


def private_imports() -> set[tuple[str, str]]:
    found = set()
    for path in sorted((ROOT / "bot").rglob("*.py")):
        for module in imported(path):
            if is_private(module):
                found.add((path.relative_to(ROOT).as_posix(), module))
    return found


def test_the_scan_sees_what_it_must() -> None:
    for module in ("telegram._utils.types", "discord.http", "aiohttp._http_parser", "celery._state"):
        assert is_private(module), module
    for module in ("telegram.request", "discord.abc", "bot._private", "aiohttp.web"):
        assert not is_private(module), module


def test_no_module_imports_a_private_sdk_part_unless_pinned_and_tested() -> None:
    assert private_imports() - set(ALLOWED) == set(), "pin and test them, or use the public API"


def test_no_allowance_outlives_its_import() -> None:
    assert set(ALLOWED) - private_imports() == set()
    for entry in ALLOWED.values():
        version, test = entry.split("; ")
        assert "==" in version and (ROOT / test).is_file(), entry
