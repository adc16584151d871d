"""What strict pydantic lets through but the published schema forbids, checked again.

Run after pydantic accepted the arguments, and only for schemas that use one of
:data:`KEYWORDS`: duplicates in a set (``uniqueItems``), ``true``/``false`` for an integer enum
value (``True == 1`` in Python), and an integer outside a published enum or range (pydantic
takes any integer for an ``IntFlag``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mcpkit import _codec
from mcpkit._jsonschema import branches, deref, union_members

__all__ = ["KEYWORDS", "first_violation"]

KEYWORDS = ("uniqueItems", "enum", "const", "minimum", "maximum")
"""The keywords a schema must use somewhere for :func:`first_violation` to find anything."""


def first_violation(
    value: Any, schema: Any, path: tuple[Any, ...], root: Mapping[str, Any]
) -> tuple[tuple[Any, ...], Any] | None:
    """The first place in ``value`` (at ``path``, validated against ``schema``, a part of
    ``root``) that breaks a rule strict pydantic does not check: its path and what was
    expected there."""
    if not isinstance(schema, dict):
        return None
    schema = _only_branch(deref(schema, root), value, root)
    if isinstance(value, bool) and _refuses_bool(schema, root):
        return path, [v for branch in branches(schema, root) for v in _enum_values(branch)]
    if isinstance(value, list):
        if schema.get("uniqueItems") and _has_duplicates(value):
            return path, "unique items"
        prefix = schema.get("prefixItems") or []
        children: Iterable[tuple[Any, Any, Any]] = (
            (i, item, prefix[i] if i < len(prefix) else schema.get("items"))
            for i, item in enumerate(value)
        )
    elif isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        children = ((k, item, properties.get(k, extra)) for k, item in value.items())
    else:
        return _scalar_violation(value, schema, path)
    for key, item, sub in children:
        found = first_violation(item, sub, (*path, key), root)
        if found is not None:
            return found
    return None


def _scalar_violation(
    value: Any, schema: Mapping[str, Any], path: tuple[Any, ...]
) -> tuple[tuple[Any, ...], Any] | None:
    # Integers only: a Flag takes any integer in pydantic, and its published enum or range is
    # what holds. Anything else pydantic accepted stays accepted (an Enum's own ``_missing_``
    # may take "FAST" for "fast"; ``null`` passes where a parameter defaults to None).
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    allowed = schema.get("enum")
    if isinstance(allowed, list) and value not in allowed:
        return path, allowed
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, (int, float)) and value < low:
        return path, f">= {low}"
    if isinstance(high, (int, float)) and value > high:
        return path, f"<= {high}"
    return None


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _only_branch(schema: Mapping[str, Any], value: Any, root: Mapping[str, Any]) -> Any:
    """The one union member that can hold ``value`` (the union itself when unclear)."""
    union = union_members(schema)
    if union is None:
        return schema
    kind = "array" if isinstance(value, list) else "object" if isinstance(value, dict) else None
    kind = kind or _JSON_TYPES.get(type(value))
    kinds = (kind, "number", None) if kind == "integer" else (kind, None)  # 5 is a number too
    fits = [b for b in (deref(u, root) for u in union) if b.get("type") in kinds]
    return fits[0] if len(fits) == 1 else schema


def _refuses_bool(schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    union = union_members(schema)
    if union is not None:
        return all(_refuses_bool(deref(b, root), root) for b in union if isinstance(b, dict))
    if "enum" in schema or "const" in schema:
        return not any(isinstance(v, bool) for v in _enum_values(schema))
    return schema.get("type") not in ("boolean", None)


def _enum_values(schema: Mapping[str, Any]) -> list[Any]:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    return [schema["const"]] if "const" in schema else []


def _has_duplicates(items: list[Any]) -> bool:
    seen = {_codec.to_json(item, by_alias=False) for item in items}
    return len(seen) != len(items)
