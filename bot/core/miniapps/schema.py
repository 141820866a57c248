"""A small JSON Schema checker for the mini-app specs: the subset their schemas use.

The core imports no third-party validator, so this checks `type`, `properties`, `required`,
`additionalProperties: false`, `enum`, `minLength`/`maxLength`, `pattern`, `minimum`/`maximum`,
`items`, `minItems`/`maxItems`. A test checks every kind's schema against the `jsonschema` package
too, so the subset stays a faithful reading of the standard.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def problems(value: Any, schema: Mapping[str, Any], where: str = "$") -> list[str]:
    """Everything about `value` that `schema` forbids, one line each; empty when it conforms."""
    expected = schema.get("type")
    if isinstance(expected, str) and not _is_type(value, expected):
        return [f"{where}: expected {expected}, got {type(value).__name__}"]
    found: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} is not one of {list(schema['enum'])}")
    if isinstance(value, str):
        found += _string_problems(value, schema, where)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        found += _number_problems(value, schema, where)
    elif isinstance(value, list):
        found += _array_problems(value, schema, where)
    elif isinstance(value, dict):
        found += _object_problems(value, schema, where)
    return found


def _is_type(value: Any, expected: str) -> bool:
    if expected in ("integer", "number") and isinstance(value, bool):
        return False
    if expected == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(expected, (object,)))


def _string_problems(value: str, schema: Mapping[str, Any], where: str) -> list[str]:
    found = []
    if len(value) < schema.get("minLength", 0):
        found.append(f"{where}: shorter than {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append(f"{where}: longer than {schema['maxLength']} characters")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        found.append(f"{where}: does not match {schema['pattern']}")
    return found


def _number_problems(value: float, schema: Mapping[str, Any], where: str) -> list[str]:
    found = []
    if "minimum" in schema and value < schema["minimum"]:
        found.append(f"{where}: below {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        found.append(f"{where}: above {schema['maximum']}")
    return found


def _array_problems(value: Sequence[Any], schema: Mapping[str, Any], where: str) -> list[str]:
    found = []
    if len(value) < schema.get("minItems", 0):
        found.append(f"{where}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append(f"{where}: more than {schema['maxItems']} items")
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            found += problems(item, items, f"{where}[{index}]")
    return found


def _object_problems(value: Mapping[str, Any], schema: Mapping[str, Any], where: str) -> list[str]:
    found = [f"{where}: missing {key!r}" for key in schema.get("required", ()) if key not in value]
    properties: Mapping[str, Any] = schema.get("properties", {})
    for key, item in value.items():
        if key in properties:
            found += problems(item, properties[key], f"{where}.{key}")
        elif schema.get("additionalProperties") is False:
            found.append(f"{where}: unexpected {key!r}")
    return found
