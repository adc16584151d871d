"""A JSON Schema in words: the rows of a parameter table, types, constraints and examples."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from mcpkit._frozen import frozen
from mcpkit._jsonschema import named_types

__all__ = ["Field", "allowed_values", "constraints", "example", "fields", "literal", "type_words"]

Schema = dict[str, Any]

_CONSTRAINTS = (
    ("minimum", "minimum {}"),
    ("exclusiveMinimum", "greater than {}"),
    ("maximum", "maximum {}"),
    ("exclusiveMaximum", "less than {}"),
    ("multipleOf", "multiple of {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("pattern", "matches {}"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
    ("minProperties", "at least {} keys"),
    ("maxProperties", "at most {} keys"),
)
_MAX_DEPTH = 8


@frozen
class Field:
    """One row: a property's dotted path (``a.b``, ``list[].c``), its schema, and whether its
    parent object requires it."""

    path: str
    schema: Schema
    required: bool


def fields(schema: Schema, prefix: str = "", depth: int = 0) -> list[Field]:
    """Every property of an object schema, nested objects expanded after their parent."""
    required = set(schema.get("required") or ())
    rows: list[Field] = []
    for name, sub in (schema.get("properties") or {}).items():
        sub = sub if isinstance(sub, dict) else {}
        rows.append(Field(prefix + name, sub, name in required))
        if depth < _MAX_DEPTH:
            rows.extend(_nested(sub, prefix + name, depth + 1))
    return rows


def _nested(schema: Schema, path: str, depth: int) -> list[Field]:
    if schema.get("properties"):
        return fields(schema, path + ".", depth)
    items = schema.get("items")
    if isinstance(items, dict) and items.get("properties"):
        return fields(items, path + "[].", depth)
    return []


def type_words(schema: Any) -> str:
    """``string``, ``array of integer``, ``string or null``, ``object of number values``..."""
    if not isinstance(schema, dict):
        return "any"
    if "$ref" in schema:
        return f"{str(schema['$ref']).rsplit('/', 1)[-1]} (see definitions)"
    if "const" in schema:
        return f"constant {literal(schema['const'])}"
    for key, joiner in (("anyOf", " or "), ("oneOf", " or "), ("allOf", " and ")):
        if isinstance(schema.get(key), list):
            return joiner.join(type_words(member) for member in schema[key])
    named = named_types(schema)
    return "any" if named is None else " or ".join(_one_type(schema, k) for k in named)


def _one_type(schema: Schema, kind: str) -> str:
    if kind == "array":
        items = schema.get("items")
        return f"array of {type_words(items)}" if isinstance(items, dict) else "array"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if not schema.get("properties") and isinstance(extra, dict):
            return f"object of {type_words(extra)} values"
        return "object"
    if kind == "string" and "format" in schema:
        return f"string ({schema['format']})"
    return kind


def allowed_values(schema: Schema) -> tuple[str, ...]:
    """The enum values (of the schema, or of its items), as literals."""
    values = schema.get("enum")
    items = schema.get("items")
    if values is None and isinstance(items, dict):
        values = items.get("enum")
    return tuple(literal(v) for v in values) if isinstance(values, list) else ()


def constraints(schema: Schema) -> list[str]:
    """Validation keywords in words: ``minimum 1``, ``at most 10 items``, ``each minimum 0``..."""
    found = list(_constraints(schema))
    items = schema.get("items")
    if isinstance(items, dict):
        found.extend(f"each {text}" for text in _constraints(items))
    return found


def _constraints(schema: Schema) -> Iterator[str]:
    for key, template in _CONSTRAINTS:
        if key in schema:
            yield template.format(literal(schema[key]))
    if schema.get("uniqueItems"):
        yield "unique items"
    if schema.get("additionalProperties") is False and schema.get("properties"):
        yield "no other keys"
    if isinstance(schema.get("x-mcp-header"), str):
        yield f"also sent as HTTP header Mcp-Param-{schema['x-mcp-header']}"


def literal(value: Any) -> str:
    """A value as shown in docs: plain text for ordinary strings, JSON otherwise."""
    if isinstance(value, str) and value and value.strip() == value:
        return value
    return json.dumps(value, ensure_ascii=False)


def example(schema: Any, depth: int = 0) -> Any:
    """A plausible value: the default, else the first enum value, else one built from the type."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        members = [m for m in schema.get(key) or () if m != {"type": "null"}]
        if members:
            return example(members[0], depth + 1)
    return _example_of_type(schema, _first_type(schema), depth)


def _first_type(schema: Schema) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and "properties" in schema:
        kind = "object"
    return kind if isinstance(kind, str) else None


def _example_of_type(schema: Schema, kind: str | None, depth: int) -> Any:
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: example(sub, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        items = schema.get("items")
        return [example(items, depth + 1)] if isinstance(items, dict) else []
    if kind in ("integer", "number"):
        if "exclusiveMinimum" in schema:
            return schema["exclusiveMinimum"] + 1
        return schema.get("minimum", 0)
    simple: dict[str | None, Any] = {"string": "string", "boolean": False}
    return simple.get(kind)
