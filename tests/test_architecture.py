"""The import rules from ARCHITECTURE.md, checked on the source so that a violation fails CI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_FORBIDDEN = (
    "telegram",
    "discord",
    "psycopg",
    "psycopg_pool",
    "pgvector",
    "aiosqlite",
    "sqlite3",
    "celery",
    "redis",
    "torch",
    "transformers",
    "peft",
    "sentence_transformers",
    "bot.store",
    "bot.inference",
    "bot.adapters",
    "bot.web",
    "bot.jobs",
    "bot.app",
    "bot.cli",
    "workers",
)
IMPLEMENTATIONS = ("bot.store", "bot.inference", "bot.adapters", "bot.web", "bot.jobs")


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def is_under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", [*python_files("bot/core"), ROOT / "bot/config.py"], ids=str)
def test_the_core_imports_no_platform_driver_or_model_library(path: Path) -> None:
    bad = {m for m in imports_of(path) for f in CORE_FORBIDDEN if is_under(m, f)}
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", python_files("bot"), ids=str)
def test_bot_never_imports_workers(path: Path) -> None:
    assert not {m for m in imports_of(path) if is_under(m, "workers")}


@pytest.mark.parametrize("package", IMPLEMENTATIONS)
def test_implementations_do_not_import_each_other(package: str) -> None:
    folder = ROOT / package.replace(".", "/")
    others = [p for p in IMPLEMENTATIONS if p != package]
    for path in folder.rglob("*.py") if folder.exists() else []:
        bad = {m for m in imports_of(path) for o in [*others, "bot.app", "bot.cli"] if is_under(m, o)}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_every_package_is_listed_for_installation() -> None:
    """pyproject lists packages by hand (schema/ installs as `kindred_schema`); none may be missed."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("bot", "workers")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found | {"kindred_schema"} == listed


@pytest.mark.parametrize(("platform", "other"), [("telegram", "discord"), ("discord", "telegram")])
def test_platform_adapters_do_not_import_each_other(platform: str, other: str) -> None:
    for path in python_files(f"bot/adapters/{platform}"):
        bad = {m for m in imports_of(path) if is_under(m, f"bot.adapters.{other}") or m == other}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", python_files("bot/web"), ids=str)
def test_the_web_server_knows_no_platform(path: Path) -> None:
    bad = {m for m in imports_of(path) for f in ("telegram", "discord", "bot.adapters") if is_under(m, f)}
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"
