"""The pure generators: schema words, examples, and the sections of resources and prompts."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.docgen import html, markdown
from mcpkit.docgen.fields import allowed_values, constraints, example, fields, literal, type_words
from mcpkit.docgen.model import annotation_flags, build

S = dict[str, Any]


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"type": "string"}, "string"),
        ({"type": "string", "format": "date-time"}, "string (date-time)"),
        ({"type": ["integer", "null"]}, "integer or null"),
        ({"type": "array", "items": {"type": "integer"}}, "array of integer"),
        ({"type": "array"}, "array"),
        ({"type": "object", "additionalProperties": {"type": "number"}}, "object of number values"),
        ({"type": "object", "properties": {"a": {}}}, "object"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "string or integer"),
        ({"allOf": [{"type": "string"}, {"minLength": 1}]}, "string and any"),
        ({"$ref": "#/$defs/Node"}, "Node (see definitions)"),
        ({"const": "x"}, "constant x"),
        ({}, "any"),
        (None, "any"),
    ],
    ids=lambda v: str(v),
)
def test_type_words(schema: Any, words: str) -> None:
    assert type_words(schema) == words


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string", "default": "d", "enum": ["a"]}, "d"),
        ({"type": "string", "enum": ["a", "b"]}, "a"),
        ({"examples": [7]}, 7),
        ({"type": "integer", "minimum": 3}, 3),
        ({"type": "number", "exclusiveMinimum": 0}, 1),
        ({"type": ["null", "boolean"]}, False),
        ({"anyOf": [{"type": "null"}, {"type": "string"}]}, "string"),
        ({"type": "array", "items": {"type": "integer"}}, [0]),
        ({"type": "array"}, []),
        ({"properties": {"a": {"const": 1}}}, {"a": 1}),
        ({}, None),
    ],
    ids=lambda v: str(v),
)
def test_example(schema: S, value: Any) -> None:
    assert example(schema) == value


def test_example_stops_at_depth() -> None:
    deep: S = {"type": "integer"}
    for _ in range(12):
        deep = {"type": "object", "properties": {"x": deep}}
    value = example(deep)
    for _ in range(9):
        value = value["x"]
    assert value is None


def test_fields_expand_nested_objects_and_arrays_of_objects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
            "c": {
                "type": "array",
                "items": {"type": "object", "properties": {"d": {"type": "string"}}},
            },
        },
        "required": ["a"],
    }
    assert [(f.path, f.required) for f in fields(schema)] == [
        ("a", True),
        ("a.b", True),
        ("c", False),
        ("c[].d", False),
    ]


def test_constraints_and_values() -> None:
    schema = {
        "type": "array",
        "minItems": 1,
        "uniqueItems": True,
        "items": {"enum": [1, "x"], "maximum": 9},
    }
    assert constraints(schema) == ["at least 1 items", "unique items", "each maximum 9"]
    assert allowed_values(schema) == ("1", "x")
    assert constraints(
        {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    ) == ["no other keys"]
    assert [literal(v) for v in ("", " x", None, True)] == ['""', '" x"', "null", "true"]


def test_annotation_flags() -> None:
    hints = {"title": "T", "readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
    assert annotation_flags(hints) == [
        "title: T",
        "may modify its environment",
        "destructive",
        "closed world",
    ]


SNAPSHOT: dict[str, Any] = {
    "server": {
        "serverInfo": {"name": "s", "version": "1", "description": "About."},
        "capabilities": {},
    },
    "tools/list": [],
    "resources/list": [
        {"uri": "file:///a|b", "name": "a|b", "mimeType": "text/plain", "size": 3, "title": "<A>"}
    ],
    "resources/templates/list": [
        {"uriTemplate": "users://{id}", "name": "user", "description": "A user."}
    ],
    "prompts/list": [
        {
            "name": "review",
            "description": "Review.",
            "arguments": [{"name": "code", "required": True}],
        },
        {"name": "review", "description": "Same name, another anchor."},
    ],
}


def test_markdown_sections_for_resources_templates_and_prompts() -> None:
    page = markdown.render(SNAPSHOT)
    for heading in ("## Resources", "## Resource templates", "## Prompts", "#### Arguments"):
        assert heading in page
    assert "## Tools" not in page
    assert "- **URI:** `file:///a|b`\n- **MIME type:** `text/plain`\n- **Size:** 3 bytes" in page
    assert "### a\\|b" not in page
    assert "### a|b" in page
    assert "**\\<A\\>**" in page
    assert "| `code` | yes |  |" in page
    assert "No arguments." in page
    assert page.startswith("# s\n\nAbout.\n")


def test_html_anchors_are_unique() -> None:
    doc = build(SNAPSHOT)
    anchors = [doc.groups[2].anchor] + [e.anchor for g in doc.groups for e in g.entries]
    assert anchors == [
        "prompts",
        "resource-a-b",
        "template-user",
        "prompt-review",
        "prompt-review-2",
    ]
    page = html.render(SNAPSHOT)
    assert 'href="#prompt-review-2"' in page
    assert 'id="prompt-review-2"' in page
    assert "<strong>&lt;A&gt;</strong>" in page


def test_markdown_code_with_backticks() -> None:
    snapshot = {
        "server": {},
        "tools/list": [{"name": "t", "inputSchema": {"properties": {"a": {"enum": ["x`y"]}}}}],
    }
    assert "`` x`y ``" in markdown.render(snapshot)
