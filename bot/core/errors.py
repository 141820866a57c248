"""Kindred's error tree. Implementations map driver and SDK errors onto it once, at the boundary."""


class KindredError(Exception):
    """Base of every error Kindred raises on purpose."""


class ConfigError(KindredError):
    """A setting is missing or invalid. The message names the variable."""


class StoreError(KindredError):
    """The store refused an operation for a reason that retrying will not fix."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or written right now (locked, read-only, server gone).

    Callers keep what they meant to write and try again later.
    """


class InferenceError(KindredError):
    """The model could not produce a reply."""


class InferenceTimeout(InferenceError):
    """Generation ran past its time limit."""


class InvalidInput(KindredError):
    """Input from a person or a file that cannot be used as it is. The message says why."""
