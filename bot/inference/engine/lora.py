"""LoRA adapters by name: where their files live, which version is there, and loading them into peft.

An adapter named `n` is the folder `<adapters_dir>/n/` as `peft` saves it (`adapter_config.json` and
`adapter_model.safetensors`). Its version is the content of an optional `version` file, else the
size and modification time of those two files. A trainer publishes a new version by writing the
weights and then the `version` file, or by renaming a finished folder into place; the next batch
that asks for `n` loads it, with no restart.

`AdapterSet` is used only from the generation thread: loading and unloading happen between
batches, never while the model runs. Each loaded version gets an internal name of its own
(`k1`, `k2`, …), so a new version is loaded next to the old one before the old one is deleted.
Where the weights go is its `AdapterSlots`: peft (`PeftSlots`, for a transformers model) or the
plain Llama engine's tensors (`llama/generate.py`'s `TensorSlots`).

Nightly training publishes each version under a new name (`v1`, `v2`, …), so names that no batch
asked for in a while are unloaded (`trim`, between batches): at most `max_loaded` stay, and none
idle longer than `idle_s`, except the one used last (peft keeps at least one adapter loaded).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bot.core.errors import InferenceError

log = logging.getLogger(__name__)

# A name is one path component: no separators, no "..", nothing hidden.
ADAPTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
CONFIG_FILE = "adapter_config.json"
WEIGHT_FILES = ("adapter_model.safetensors", "adapter_model.bin")
VERSION_FILE = "version"
# peft's name for "no adapter" in a mixed batch (`adapter_names=[...]`).
BASE = "__base__"
# Adapters kept loaded at most: tonight's, and a few older ones that replies may still ask for.
MAX_LOADED = 3
# An adapter no batch asked for in this long is unloaded (its memory back to the model).
IDLE_S = 900.0


@dataclass(frozen=True, slots=True)
class AdapterVersion:
    """One adapter as it is on disk now."""

    name: str
    path: Path
    version: str


def find_adapter(root: Path | None, name: str) -> AdapterVersion:
    """The adapter `name` under `root` and its current version, or InferenceError saying why not.

    Cheap (a few `stat` calls), so it may run on the event loop for every request.
    """
    if root is None:
        raise InferenceError(
            f"LoRA adapter {name!r} asked for, but no LoRA adapters folder is configured "
            "(KINDRED_ADAPTERS_DIR)"
        )
    if not ADAPTER_NAME.fullmatch(name):
        raise InferenceError(f"LoRA adapter name {name!r} is not a plain folder name")
    folder = root / name
    if not (folder / CONFIG_FILE).is_file():
        raise InferenceError(f"unknown LoRA adapter {name!r}: no {CONFIG_FILE} in {folder}")
    return AdapterVersion(name, folder, _version_of(folder))


def _version_of(folder: Path) -> str:
    try:
        marker = folder / VERSION_FILE
        if marker.is_file():
            return "v:" + marker.read_text(encoding="utf-8").strip()
        parts = []
        for filename in (CONFIG_FILE, *WEIGHT_FILES):
            path = folder / filename
            if path.is_file():
                stat = path.stat()
                parts.append(f"{filename}:{stat.st_size}:{stat.st_mtime_ns}")
    except OSError as exc:  # the folder is being replaced right now
        raise InferenceError(f"LoRA adapter {folder.name!r} cannot be read: {exc}") from exc
    if len(parts) < 2:
        raise InferenceError(f"LoRA adapter {folder.name!r} has no weights in {folder}")
    return ";".join(parts)


@dataclass(slots=True)
class _Loaded:
    version: str
    internal: str
    used_at: float


class AdapterSlots(Protocol):
    """Where loaded adapters live: peft's wrapper around a transformers model, or plain tensors."""

    def load(self, path: Path, internal: str) -> None: ...

    def delete(self, internal: str, active: str) -> None:
        """Unload `internal`; `active`, still loaded, becomes the active one first."""


class PeftSlots:
    """Adapters inside peft: the model is wrapped in a PeftModel on the first load."""

    def __init__(self, base: Any) -> None:
        self.base = base
        self.peft: Any = None

    def load(self, path: Path, internal: str) -> None:
        from peft import PeftModel

        if self.peft is None:
            self.peft = PeftModel.from_pretrained(self.base, str(path), adapter_name=internal)
            self.peft.eval()
        else:
            self.peft.load_adapter(str(path), adapter_name=internal)

    def delete(self, internal: str, active: str) -> None:
        self.peft.set_adapter(active)  # peft warns when the active adapter is deleted
        self.peft.delete_adapter(internal)


class AdapterSet:
    """The adapters loaded into one model, each version under an internal name of its own."""

    def __init__(
        self,
        root: Path | None,
        slots: AdapterSlots,
        *,
        max_loaded: int = MAX_LOADED,
        idle_s: float = IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_loaded < 1:
            raise ValueError("max_loaded must be at least 1")
        self.root = root
        self.slots = slots
        self.max_loaded = max_loaded
        self.idle_s = idle_s
        self._clock = clock
        self._loaded: dict[str, _Loaded] = {}
        self._counter = 0

    @property
    def loaded(self) -> list[str]:
        """The adapter names loaded now, least recently used first."""
        return [name for name, _ in sorted(self._loaded.items(), key=lambda item: item[1].used_at)]

    def resolve(self, name: str | None) -> str:
        """The internal adapter name serving `name` now, loading a new version first if there is one.

        A failed reload keeps serving the version already loaded (and logs why); with none
        loaded, the failure is an InferenceError for the rows that asked for it.
        """
        if name is None:
            return BASE
        current = self._loaded.get(name)
        if current is not None:
            current.used_at = self._clock()
        try:
            found = find_adapter(self.root, name)
            if current is not None and current.version == found.version:
                return current.internal
            internal = self._load(found)
        except InferenceError:
            if current is None:
                raise
            log.warning("LoRA adapter %r: keeping the loaded version; the new one cannot be read", name)
            return current.internal
        except Exception as exc:  # peft or safetensors rejecting the files
            if current is None:
                raise InferenceError(f"LoRA adapter {name!r} cannot be loaded: {exc}") from exc
            log.warning("LoRA adapter %r: keeping the loaded version; the new one failed: %s", name, exc)
            return current.internal
        if current is not None:
            self.slots.delete(current.internal, active=internal)
        self._loaded[name] = _Loaded(found.version, internal, self._clock())
        log.info("LoRA adapter %r loaded (%s)", name, found.version)
        return internal

    def trim(self, in_use: Collection[str] = ()) -> list[str]:
        """Unload adapters idle past `idle_s`, then the least recently used beyond `max_loaded`.
        Never one of `in_use` (internal names of the batch about to run) nor the last one used.
        Returns the adapter names unloaded. Call between batches only."""
        if len(self._loaded) <= 1:
            return []
        now = self._clock()
        by_age = sorted(self._loaded.items(), key=lambda item: item[1].used_at)
        newest = by_age[-1][0]
        over = len(by_age) - self.max_loaded
        dropped: list[str] = []
        for name, entry in by_age:
            if name == newest or entry.internal in in_use:
                continue
            if over > 0 or now - entry.used_at > self.idle_s:
                self.slots.delete(entry.internal, active=self._loaded[newest].internal)
                del self._loaded[name]
                dropped.append(name)
                over -= 1
        if dropped:
            log.info("LoRA adapters unloaded (not used lately): %s", ", ".join(dropped))
        return dropped

    def _load(self, found: AdapterVersion) -> str:
        self._counter += 1
        internal = f"k{self._counter}"
        self.slots.load(found.path, internal)
        return internal
