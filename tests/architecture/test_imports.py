"""Every import rule in ARCHITECTURE.md, checked on the source so that a violation fails CI.

The floors, from the ground up: 1 `bot/core`; 2 the implementations (`bot/store`, `bot/inference`,
`bot/training`, `bot/jobs`, `bot/adapters`, `bot/web`, `bot/shared_state`, `bot/importers`,
`bot/media`); 3 `bot/wiring`, the
composition root; 4 the entry points (`bot/cli`, `workers`). A file imports from its own floor or
the floors below, with the narrower rules each test below names.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = "bot.core"
IMPLEMENTATIONS = (
    "bot.store", "bot.inference", "bot.training", "bot.jobs", "bot.adapters", "bot.web", "bot.shared_state",
    "bot.importers", "bot.media",
)  # fmt: skip
ROOT_OF_COMPOSITION = "bot.wiring"
ENTRY_POINTS = ("bot.cli", "workers")
# Written down so that it is a choice: numpy is the core's one library (vectors, cosine).
CORE_LIBRARIES = ("numpy",)
# Imported only inside bot/inference and bot/training (the nightly trainer and its scorer).
MODEL_LIBRARIES = (
    "torch", "transformers", "peft", "trl", "accelerate", "datasets", "safetensors",
    "sentence_transformers", "onnx", "onnxruntime",
)  # fmt: skip
MODEL_FLOORS = ("bot.inference", "bot.training")
# What the entry points may use of floor 2: the shared adapter Protocol (a type), other programs'
# exports read as import items (`kindred memory import`), and the Celery
# configuration that the worker app shares with the side that submits jobs.
ENTRY_POINT_IMPLEMENTATIONS = {
    "bot.cli": ("bot.adapters.base", "bot.importers"),
    "workers": ("bot.jobs.celery_runner",),
}


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def relative_imports_of(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level > 0]


def is_under(module: str, *packages: str) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def python_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def ours(module: str) -> bool:
    return is_under(module, "bot", "workers", "kindred_schema")


def bad_imports(path: Path, allowed: tuple[str, ...]) -> list[str]:
    """Kindred's modules that `path` imports from outside `allowed`."""
    return sorted(m for m in imports_of(path) if ours(m) and not is_under(m, *allowed))


def test_every_floor_exists_and_nothing_is_loose_in_bot() -> None:
    floors = (CORE, *IMPLEMENTATIONS, ROOT_OF_COMPOSITION, *ENTRY_POINTS)
    for package in floors:
        assert (ROOT / package.replace(".", "/") / "__init__.py").exists(), package
    loose = sorted(p.name for p in (ROOT / "bot").glob("*.py") if p.name != "__init__.py")
    assert not loose, f"every module of bot/ belongs to a floor's folder: {loose}"


@pytest.mark.parametrize("path", python_files("bot/core"), ids=str)
def test_the_core_imports_only_the_standard_library_numpy_and_itself(path: Path) -> None:
    bad = sorted(
        m
        for m in imports_of(path)
        if not is_under(m, CORE, *CORE_LIBRARIES) and m.split(".")[0] not in sys.stdlib_module_names
    )
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


@pytest.mark.parametrize("package", IMPLEMENTATIONS)
def test_an_implementation_imports_the_core_and_its_own_package_only(package: str) -> None:
    """Never another implementation, the composition root, an entry point, or workers/."""
    for path in python_files(package.replace(".", "/")):
        own: tuple[str, ...] = (package, CORE)
        if package == "bot.adapters":
            # The platforms share bot/adapters' own modules; each platform's folder is its own.
            platform = path.parent.name if path.parent != ROOT / "bot/adapters" else None
            own = (CORE, *ADAPTERS_SHARED, *([f"bot.adapters.{platform}"] if platform else []))
        bad = bad_imports(path, own)
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


ADAPTERS_SHARED = tuple(module_of(p) for p in sorted((ROOT / "bot/adapters").glob("*.py")))


@pytest.mark.parametrize(("platform", "other"), [("telegram", "discord"), ("discord", "telegram")])
def test_platform_adapters_do_not_import_each_other(platform: str, other: str) -> None:
    for path in python_files(f"bot/adapters/{platform}"):
        bad = {m for m in imports_of(path) if is_under(m, f"bot.adapters.{other}", other)}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", sorted((ROOT / "bot/adapters").glob("*.py")), ids=str)
def test_the_shared_adapter_modules_know_no_platform(path: Path) -> None:
    """Delivery, streaming and the console are written once for every platform."""
    platforms = ("telegram", "discord", "bot.adapters.telegram", "bot.adapters.discord")
    bad = {m for m in imports_of(path) if is_under(m, *platforms)}
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", python_files("bot/web"), ids=str)
def test_the_web_server_knows_no_platform(path: Path) -> None:
    bad = {m for m in imports_of(path) if is_under(m, "telegram", "discord", "bot.adapters")}
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", python_files("bot/wiring"), ids=str)
def test_the_composition_root_imports_no_entry_point(path: Path) -> None:
    bad = bad_imports(path, (CORE, *IMPLEMENTATIONS, ROOT_OF_COMPOSITION))
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_entry_points_choose_no_implementation(entry: str) -> None:
    """They ask the composition root for what they run; only it picks implementations."""
    allowed = (CORE, ROOT_OF_COMPOSITION, entry, *ENTRY_POINT_IMPLEMENTATIONS[entry])
    for path in python_files(entry.replace(".", "/")):
        bad = bad_imports(path, allowed)
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


@pytest.mark.parametrize("path", python_files("bot"), ids=str)
def test_bot_never_imports_workers(path: Path) -> None:
    assert not {m for m in imports_of(path) if is_under(m, "workers")}


@pytest.mark.parametrize("path", python_files("bot", "workers", "tests", "bench"), ids=str)
def test_no_relative_imports(path: Path) -> None:
    """Every import names its module whole, so that its floor shows where it is used."""
    assert not relative_imports_of(path), f"{path.relative_to(ROOT)}: relative import"


@pytest.mark.parametrize("path", python_files("bot", "workers"), ids=str)
def test_model_libraries_only_inside_inference_and_training(path: Path) -> None:
    if is_under(module_of(path), *MODEL_FLOORS):
        return
    bad = {m for m in imports_of(path) if is_under(m, *MODEL_LIBRARIES)}
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_model_libraries_load_only_when_a_model_is_needed() -> None:
    """Importing the composition root, the CLI, the worker app and the training package loads no
    torch or transformers, so that a command that needs no model (or a bot whose model is remote)
    starts fast."""
    import subprocess

    probe = (
        "import sys, bot.wiring.kindred, bot.wiring.platforms, bot.cli.main, bot.cli.run, bot.cli.chat,"
        " bot.cli.memory, bot.cli.workers, workers.app, bot.training;"
        f"print(sorted(m for m in {MODEL_LIBRARIES!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_every_folder_of_code_is_a_package_the_install_finds() -> None:
    """setup.py finds the packages (schema/ installs as `kindred_schema`): a folder of modules
    without an `__init__.py` would be left out of a non-editable install, so there is none."""
    from setuptools import find_packages

    found = set(find_packages(where=str(ROOT), include=["bot", "bot.*", "workers", "workers.*"]))
    with_code = {
        ".".join(module.parent.relative_to(ROOT).parts)
        for top in ("bot", "workers")
        for module in (ROOT / top).rglob("*.py")
    }
    assert with_code <= found, sorted(with_code - found)
    assert '"kindred_schema"' in (ROOT / "setup.py").read_text()


# Test folders that are not a package of bot/ or workers/: the house itself, shared fakes, bench/,
# and the base install (tests/install).
TEST_EXTRAS = {"architecture", "support", "bench", "install"}


def test_tests_mirror_the_layout() -> None:
    """No loose test modules at the root of tests/, and each test folder is named for a package of
    bot/ (or workers/) that it tests, or is one of TEST_EXTRAS."""
    kept = {"__init__.py", "conftest.py"}
    loose = sorted(p.name for p in (ROOT / "tests").glob("*.py") if p.name not in kept)
    assert not loose, loose
    packages = {p.parent.name for p in (ROOT / "bot").glob("*/__init__.py")} | {"workers"}
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - packages - TEST_EXTRAS == set()


LIBRARIES_NAMED_LIKE_FILES = {"discord.py"}


def test_every_path_in_the_architecture_exists() -> None:
    """ARCHITECTURE.md names files and folders in backticks, and the floors' drawing names files
    under each folder; each must be there."""
    import re

    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:bot|workers|schema|tests|bench)/[\w/.]*)`", text))
    missing = sorted(path for path in named if not (ROOT / path.split(":")[0]).exists())
    assert named and not missing, missing
    drawing = next(block for block in text.split("```")[1::2] if block.lstrip().startswith("4  entry points"))
    folder: str | None = None
    drawn: list[str] = []
    for line in drawing.splitlines():
        here = re.search(r"\b((?:bot/\w+|workers)/)", line)
        folder = here.group(1) if here else folder
        # A name is under the folder last named (`sqlite/store.py` under bot/store/); a whole path
        # (`bot/wiring/schedule.py`) is checked by the backticked paths above.
        for name in re.findall(r"(?<![\w/])((?!bot/)[\w*]+(?:/[\w*]+)*\.py)\b", line):
            if name in LIBRARIES_NAMED_LIKE_FILES:
                continue
            assert folder is not None, line
            drawn.append(folder + name)
            if not list(ROOT.glob(folder + name)):
                missing.append(folder + name)
    assert drawn and not missing, missing


ROOMS = (
    "chat",
    "memory",
    "learning",
    "miniapps",
    "proactive",
    "jobs",
    "media",
    "usage",
    "personas",
    "settings",
    "chat_models",
)
# What a room shows the others: its Protocols, its value types, and what its __init__ exports.
ROOM_SURFACE = ("ports", "models")


def room_of(path: Path) -> str | None:
    parts = path.relative_to(ROOT / "bot/core").parts
    return parts[0] if len(parts) > 1 and parts[0] in ROOMS else None


def room_internals_imported(source: str, mine: str | None) -> list[str]:
    """The other rooms' internal modules that `source`, a module of room `mine`, imports
    (`bot.core.memory.recall`, or `from bot.core.memory import recall`)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        parts = node.module.split(".")
        if parts[:2] != ["bot", "core"] or len(parts) < 3 or parts[2] not in ROOMS or parts[2] == mine:
            continue
        if len(parts) > 3 and parts[3] not in ROOM_SURFACE:
            found.append(node.module)
        elif len(parts) == 3:
            room = ROOT / "bot/core" / parts[2]
            found += [f"{node.module}.{a.name}" for a in node.names if (room / f"{a.name}.py").exists()
                      and a.name not in ROOM_SURFACE]  # fmt: skip
    return found


@pytest.mark.parametrize("path", [p for p in python_files("bot/core") if room_of(p)], ids=str)
def test_a_room_uses_another_only_through_its_public_surface(path: Path) -> None:
    """bot/core's rooms (chat, memory, learning, miniapps, proactive, jobs, media) import one another
    only from a room's ports, models and __init__ exports, never its internal modules."""
    bad = room_internals_imported(path.read_text(encoding="utf-8"), room_of(path))
    assert not bad, f"{path.relative_to(ROOT)} imports another room's internals: {bad}"


def test_the_room_rule_sees_an_internal_import() -> None:
    """The rule above reads what it should: a room module importing another's internals fails,
    its public surface and its own room's modules pass."""
    assert room_of(ROOT / "bot/core/chat/conversation.py") == "chat"
    internal = "from bot.core.memory.recall import hybrid_search\nfrom bot.core.memory import recall\n"
    assert room_internals_imported(internal, "chat") == ["bot.core.memory.recall"] * 2
    public = "from bot.core.memory import hybrid_search\nfrom bot.core.memory.ports import Embedder\n"
    assert room_internals_imported(public, "chat") == []
    assert room_internals_imported(internal, "memory") == []
