"""The Discord adapter uses discord.py's documented API only: no import of its undocumented modules
(`discord.http`, `discord.state`, `discord.gateway`, the webhook adapters), nothing private
(`_name`) reached into on another object, and no URL of Discord's written by hand: every call goes
through discord.py and its `Route.BASE`."""

from __future__ import annotations

import ast
from pathlib import Path

ADAPTER = Path(__file__).resolve().parents[3] / "bot" / "adapters" / "discord"
UNDOCUMENTED = ("discord.http", "discord.state", "discord.gateway", "discord.webhook.async_", "discord.types")


def sources() -> list[Path]:
    found = sorted(ADAPTER.rglob("*.py"))
    assert len(found) > 10
    return found


def imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_undocumented_discord_module_is_imported() -> None:
    for path in sources():
        for name in imported(ast.parse(path.read_text(encoding="utf-8"))):
            undocumented = any(name == bad or name.startswith(bad + ".") for bad in UNDOCUMENTED)
            private = name.startswith("discord") and any(part.startswith("_") for part in name.split("."))
            assert not (undocumented or private), f"{path.name} imports {name}"


def test_nothing_private_is_reached_into() -> None:
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                owner = node.value
                assert isinstance(owner, ast.Name) and owner.id in ("self", "cls"), (
                    f"{path.name}:{node.lineno} reaches into .{node.attr}"
                )


def test_no_discord_url_is_written_by_hand() -> None:
    for path in sources():
        text = path.read_text(encoding="utf-8")
        assert "discord.com/api" not in text and "discordapp.com" not in text, path.name


def test_the_scan_sees_what_it_looks_for() -> None:
    tree = ast.parse("from discord.http import HTTPClient\nimport discord\nx = client._connection")
    assert "discord.http.HTTPClient" in imported(tree)
    assert any(isinstance(node, ast.Attribute) and node.attr == "_connection" for node in ast.walk(tree))
