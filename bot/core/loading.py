"""Something slow to build (a model), built by its first user, once per process."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class LoadOnce(Generic[T]):
    """`get()` builds the value on first call and returns the same one after, from any thread."""

    def __init__(self, load: Callable[[], T], *, what: str = "model") -> None:
        self._load = load
        self._what = what
        self._value: T | None = None
        self._lock = threading.Lock()  # a threads pool may start several jobs at once

    def get(self) -> T:
        with self._lock:
            if self._value is None:
                started = time.monotonic()
                self._value = self._load()
                log.info("%s loaded in %.1f s", self._what, time.monotonic() - started)
            return self._value

    @property
    def loaded(self) -> bool:
        """Whether `get()` has built the value (it then returns at once)."""
        return self._value is not None

    def peek(self) -> T | None:
        """The value if built, else None: never builds it."""
        return self._value
