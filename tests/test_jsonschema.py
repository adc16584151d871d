"""Reading JSON Schema (``mcpkit._jsonschema``): walked by keyword, asserted on literal schemas."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit._jsonschema import (
    branches,
    deref,
    local_name,
    map_subschemas,
    mentions,
    named_types,
    nested_properties,
    recursive_defs,
    step,
    subschemas,
    type_set,
    union_members,
    without_null,
)

INT, STR, NULL = {"type": "integer"}, {"type": "string"}, {"type": "null"}

SUBSCHEMA_CASES: list[tuple[str, dict[str, Any], list[Any]]] = [
    ("no-subschemas", {"type": "string", "enum": ["a"], "default": {"items": INT}}, []),
    (
        "one-schema-keywords",
        {"items": INT, "not": STR, "additionalProperties": False},
        [INT, STR, False],
    ),
    ("lists", {"anyOf": [INT, STR], "prefixItems": [NULL]}, [INT, STR, NULL]),
    ("maps", {"properties": {"items": INT}, "$defs": {"A": STR}}, [INT, STR]),
    ("older-drafts", {"items": [INT, STR], "definitions": {"A": NULL}}, [INT, STR, NULL]),
    ("a-map-keyword-holding-a-list-holds-none", {"properties": [INT]}, []),
]


@pytest.mark.parametrize(
    ("schema", "expected"), [c[1:] for c in SUBSCHEMA_CASES], ids=[c[0] for c in SUBSCHEMA_CASES]
)
def test_subschemas(schema: dict[str, Any], expected: list[Any]) -> None:
    assert list(subschemas(schema)) == expected


def test_map_subschemas_changes_subschemas_only_and_keeps_the_key_order() -> None:
    schema = {
        "properties": {"type": {"type": "string"}, "items": INT},
        "type": "object",
        "default": {"type": "x"},
        "anyOf": [STR],
        "items": [INT],
    }
    marked = map_subschemas(schema, lambda sub: {"seen": sub})
    assert marked == {
        "properties": {"type": {"seen": STR}, "items": {"seen": INT}},
        "type": "object",
        "default": {"type": "x"},
        "anyOf": [{"seen": STR}],
        "items": [{"seen": INT}],
    }
    assert list(marked) == list(schema)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"properties": {"$ref": STR}}, False),
        ({"default": {"$ref": "#/$defs/A"}, "enum": [{"$ref": "x"}]}, False),
        ({"properties": {"a": {"items": {"$ref": "#/$defs/A"}}}}, True),
        ({"$ref": "#/$defs/A"}, True),
        ("not a schema", False),
    ],
    ids=["property-name", "values", "nested", "root", "not-a-dict"],
)
def test_mentions_reads_keywords_not_names_or_values(schema: Any, expected: bool) -> None:
    assert mentions(schema, "$ref") is expected


def test_local_name_and_deref() -> None:
    root = {"$defs": {"A": INT}}
    assert [local_name(r) for r in ("#/$defs/A", "#/definitions/A", "other.json", 5)] == [
        "A",
        None,
        None,
        None,
    ]
    assert deref({"$ref": "#/$defs/A"}, root) == INT
    assert deref({"$ref": "#/$defs/Missing"}, root) == {}
    assert deref({"$ref": "#/definitions/A", "type": "x"}, root) == {
        "$ref": "#/definitions/A",
        "type": "x",
    }


def test_recursive_defs_are_the_cycle_members() -> None:
    defs = {
        "Tree": {"properties": {"kids": {"items": {"$ref": "#/$defs/Tree"}}}},
        "Ping": {"properties": {"pong": {"$ref": "#/$defs/Pong"}}},
        "Pong": {"anyOf": [{"$ref": "#/$defs/Ping"}, NULL]},
        "Leaf": {"properties": {"tree": {"$ref": "#/$defs/Tree"}}},
    }
    assert recursive_defs(defs) == {"Tree", "Ping", "Pong"}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"anyOf": [INT], "oneOf": [STR]}, [INT]),
        ({"anyOf": [], "oneOf": [STR]}, [STR]),
        ({"oneOf": {"type": "string"}}, None),
        ({"allOf": [INT]}, None),
    ],
    ids=["anyOf-first", "empty-anyOf", "not-a-list", "allOf-is-no-union"],
)
def test_union_members(schema: dict[str, Any], expected: list[Any] | None) -> None:
    assert union_members(schema) == expected


def test_branches_flatten_unions_and_follow_refs() -> None:
    root = {"$defs": {"A": {"anyOf": [INT, NULL]}}}
    schema = {"anyOf": [{"$ref": "#/$defs/A"}, {"oneOf": [STR]}, "junk"]}
    assert branches(schema, root) == [INT, NULL, STR]
    assert branches(INT, root) == [INT]


def test_step_into_items_and_properties() -> None:
    pair = {"type": "array", "prefixItems": [INT, STR], "items": NULL}
    root = {"$defs": {"Pair": pair}}
    record = {
        "anyOf": [
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/Pair"}}},
            {"type": "object", "additionalProperties": STR},
            {"properties": {"b": INT}, "additionalProperties": INT},  # no "type": no extras
        ]
    }
    assert step(record, "a", root) == [pair, STR]
    assert step(record, "z", root) == [STR]
    assert step(pair, 1, root) == [STR]
    assert step(pair, 5, root) == [NULL]
    assert step(pair, True, root) == []


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            {"anyOf": [INT, NULL], "default": None, "description": "d"},
            {"type": "integer", "description": "d"},
        ),
        ({"anyOf": [INT, STR, NULL], "default": None}, {"anyOf": [INT, STR]}),
        ({"type": "integer", "default": None}, {"type": "integer"}),
        ({"type": "integer", "default": 0}, {"type": "integer", "default": 0}),
    ],
    ids=["optional", "optional-union", "plain", "other-default"],
)
def test_without_null(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert without_null(schema) == expected


@pytest.mark.parametrize(
    ("schema", "named", "types"),
    [
        (INT, ("integer",), {"integer"}),
        ({"type": ["string", "null"]}, ("string", "null"), {"string", "null"}),
        ({"anyOf": [INT, {"oneOf": [STR]}]}, None, {"integer", "string"}),
        ({"anyOf": []}, None, {"any"}),
        ({}, None, {"any"}),
    ],
    ids=["one", "list", "union", "empty-union", "unsaid"],
)
def test_named_types_and_type_set(
    schema: dict[str, Any], named: tuple[str, ...] | None, types: set[str]
) -> None:
    assert named_types(schema) == named
    assert type_set(schema) == types


def test_nested_properties_parents_first() -> None:
    schema = {
        "properties": {
            "a": {"properties": {"b": INT, "c": "junk"}},
            "d": STR,
        },
        "items": {"properties": {"e": INT}},
    }
    assert [path for path, _ in nested_properties(schema)] == [("a",), ("a", "b"), ("d",)]
