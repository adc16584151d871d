"""Schema profiles: what each profile publishes for a battery of types (literal outputs), that
each output passes its providers' rules tables, what a profile refuses at definition time, and
that validation keeps the real types."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from profile_types import BATTERY, PORTABLE, STRICT, Address, Node, Refused
from pydantic import BaseModel, Field

from mcpkit import App, DefinitionError, Header, InvalidArguments, ServerOptions
from mcpkit._profile_words import DESCRIBED, described, words
from mcpkit.docgen.providers import provider_findings
from mcpkit.schema import EMPTY
from mcpkit.testing import Client
from mcpkit.tools import Tool


def tool_of(annotation: Any, default: Any, profile: Any) -> Tool:
    """A tool ``x(x: annotation = default)`` documented "The value.", in ``profile``."""

    def x(x: Any) -> str:
        return ""

    x.__annotations__ = {"x": annotation, "return": str}
    if default is not EMPTY:
        x.__defaults__ = (default,)
    x.__doc__ = "T.\n\nArgs:\n    x: The value.\n"
    return Tool(x, schema_profile=profile)


def refusal(tool: Tool) -> str:
    with pytest.raises(DefinitionError) as caught:
        tool.compile()
    message = str(caught.value)
    prefix = f"tool 'x': schema_profile={tool.schema_profile!r} cannot publish parameter '$.x': "
    suffix = '; or publish this tool as it is with schema_profile="default"'
    assert message.startswith(prefix), message
    assert message.endswith(suffix), message
    return message[len(prefix) : -len(suffix)]


CASES = [pytest.param(annotation, default, id=name) for name, annotation, default in BATTERY]


@pytest.mark.parametrize(("annotation", "default"), CASES)
def test_portable(annotation: Any, default: Any, request: pytest.FixtureRequest) -> None:
    expected = PORTABLE[request.node.callspec.id]
    tool = tool_of(annotation, default, "portable")
    if isinstance(expected, Refused):
        assert refusal(tool) == expected.text
        return
    prop, required = expected
    schema = tool.input_schema
    assert schema == {
        "type": "object",
        "properties": {"x": prop},
        **({"required": ["x"]} if required else {}),
    }
    assert provider_findings(schema, "portable") == []


@pytest.mark.parametrize(("annotation", "default"), CASES)
def test_openai_strict(annotation: Any, default: Any, request: pytest.FixtureRequest) -> None:
    expected = STRICT[request.node.callspec.id]
    tool = tool_of(annotation, default, "openai-strict")
    if isinstance(expected, Refused):
        assert refusal(tool) == expected.text
        return
    schema = tool.input_schema
    if "$defs" not in expected:
        expected = {
            "type": "object",
            "properties": {"x": expected},
            "required": ["x"],
            "additionalProperties": False,
        }
    assert schema == expected
    assert provider_findings(schema, "openai-strict") == []


@pytest.mark.parametrize(("annotation", "default"), CASES)
def test_default_profile_is_what_is_derived(annotation: Any, default: Any) -> None:
    assert tool_of(annotation, default, "default").input_schema == (
        tool_of(annotation, default, None).input_schema
    )


# ------------------------------------------------------------------ options and validation


class Filters(BaseModel):
    size: int = 3
    label: str | None = None


def search(
    query: Annotated[str, Field(min_length=1, max_length=50)],
    limit: Annotated[int, Field(ge=1, le=50)] = 5,
    filters: Filters | None = None,
) -> str:
    """Search."""
    return f"{query}|{limit}|{filters}"


def profiled_app() -> App:
    app = App("profiles", "1", options=ServerOptions(schema_profile="portable"))
    app.add_tool(search)
    app.add_tool(search, name="strict", schema_profile="openai-strict")
    app.add_tool(search, name="plain", schema_profile="default")
    return app


def test_app_profile_and_tool_override() -> None:
    app = profiled_app()
    with Client(app) as client:
        listed = {tool["name"]: tool["inputSchema"] for tool in client.list_tools()}
    assert listed["search"]["properties"]["limit"] == {
        "type": "integer",
        "description": "Between 1 and 50; default 5.",
        "minimum": 1,
        "maximum": 50,
        "default": 5,
    }
    assert listed["strict"]["required"] == ["query", "limit", "filters"]
    assert listed["plain"] == Tool(search).input_schema


@pytest.mark.parametrize("name", ["search", "strict"])
@pytest.mark.parametrize(
    ("arguments", "field", "expected", "received", "text"),
    [
        pytest.param(
            {"query": ""},
            "query",
            "at least 1 characters",
            "",
            '- query: expected at least 1 characters; received ""',
            id="len",
        ),
        pytest.param(
            {"query": "a", "limit": 300},
            "limit",
            "<= 50",
            300,
            "- limit: expected <= 50; received 300",
            id="max",
        ),
        pytest.param(
            {"query": None},
            "query",
            "string",
            None,
            "- query: expected string; received null",
            id="null",
        ),
        pytest.param(
            {"query": "a", "filters": {"size": "3"}},
            "filters.size",
            "integer",
            "3",
            '- filters.size: expected integer; received "3"',
            id="nested",
        ),
    ],
)
def test_validation_keeps_the_real_constraints(
    name: str, arguments: dict[str, Any], field: str, expected: str, received: Any, text: str
) -> None:
    with Client(profiled_app()) as client:
        result = client.call_tool(name, arguments)
    failure = {"field": field, "expected": expected, "received": received}
    assert result == {
        "content": [{"type": "text", "text": f"Invalid arguments for tool {name!r}:\n{text}"}],
        "isError": True,
        "_meta": {"mcpkit/invalidArguments": [failure]},
    }


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        pytest.param({"query": "a", "limit": None, "filters": None}, "a|5|None", id="top"),
        pytest.param(
            {"query": "a", "limit": 7, "filters": {"size": None, "label": None}},
            "a|7|size=3 label=None",
            id="nested",
        ),
        pytest.param({"query": "a"}, "a|5|None", id="omitted"),
    ],
)
def test_openai_strict_null_means_omitted(arguments: dict[str, Any], text: str) -> None:
    with Client(profiled_app()) as client:
        result = client.call_tool("strict", arguments)
    assert result == {"content": [{"type": "text", "text": text}], "isError": False}


def test_portable_null_is_still_accepted_where_the_type_takes_it() -> None:
    with Client(profiled_app()) as client:
        result = client.call_tool("search", {"query": "a", "filters": {"label": None}})
    assert result == {
        "content": [{"type": "text", "text": "a|5|size=3 label=None"}],
        "isError": False,
    }


def test_bad_profile_names() -> None:
    with pytest.raises(ValueError, match="schema_profile must be one of 'default', 'portable', "):
        ServerOptions(schema_profile="gemini")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError) as caught:
        Tool(search, schema_profile="strict")  # type: ignore[arg-type]
    assert str(caught.value) == (
        "tool 'search': schema_profile must be one of 'default', 'portable', 'openai-strict', "
        "not 'strict'"
    )


def test_recursive_type_is_refused_when_the_app_compiles() -> None:
    app = App("tree", "1", options=ServerOptions(schema_profile="portable"))

    @app.tool
    def walk(tree: Node) -> str:
        """Walk."""
        return tree.name

    with pytest.raises(DefinitionError, match=r"tool 'walk': schema_profile='portable' cannot"):
        app.compile()


def test_output_schema_and_explicit_input() -> None:
    def echo(**arguments: Any) -> Address:
        """Echo."""
        return Address(street="s", zip="12345")

    explicit = {
        "type": "object",
        "properties": {"n": {"type": ["integer", "null"], "exclusiveMinimum": 0}},
        "additionalProperties": False,
    }
    tool = Tool(echo, input_schema=explicit, schema_profile="portable")
    assert tool.input_schema == {
        "type": "object",
        "properties": {"n": {"type": "integer", "description": "Greater than 0.", "minimum": 1}},
    }
    assert tool.output_schema == Tool(echo, input_schema=explicit).output_schema
    with pytest.raises(InvalidArguments) as caught:
        tool.validate({"n": 1, "x": 2})  # the explicit schema still holds
    assert caught.value.detail == {"field": "x", "expected": "no such argument", "received": 2}


def test_header_annotation_is_kept() -> None:
    def routed(region: Annotated[str, Header("Region")]) -> str:
        """Route."""
        return region

    for profile in ("portable", "openai-strict"):
        schema = Tool(routed, schema_profile=profile).input_schema
        assert schema["properties"]["region"]["x-mcp-header"] == "Region"
        assert provider_findings(schema, "portable" if profile == "portable" else profile) == []


NO_ARGUMENTS = {"type": "object", "additionalProperties": False}
"""The form the MCP spec recommends for a tool without parameters (OpenAI wants properties)."""


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        ("portable", {"type": "object", "properties": {}}),
        (
            "openai-strict",
            {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
        ),
    ],
)
def test_tool_without_parameters(profile: Any, expected: dict[str, Any]) -> None:
    def ping(**arguments: Any) -> str:
        """Ping."""
        return "pong"

    schema = Tool(ping, input_schema=NO_ARGUMENTS, schema_profile=profile).input_schema
    assert schema == expected
    assert provider_findings(schema, "portable" if profile == "portable" else profile) == []


def test_strict_types_an_untyped_object() -> None:
    def put(**arguments: Any) -> str:
        """Put."""
        return "ok"

    schema = {"type": "object", "properties": {"a": {"properties": {"b": {"type": "string"}}}}}
    assert Tool(put, input_schema=schema, schema_profile="openai-strict").input_schema == {
        "type": "object",
        "properties": {
            "a": {
                "type": ["object", "null"],
                "properties": {"b": {"type": ["string", "null"]}},
                "required": ["b"],
                "additionalProperties": False,
            }
        },
        "required": ["a"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("node", "description", "expected"),
    [
        ({"minimum": 1}, None, "At least 1."),
        ({"exclusiveMaximum": 1.5}, "Ratio", "Ratio. Less than 1.5."),
        ({"minLength": 1}, "Name:", "Name: At least 1 character."),
        ({"maxItems": 1, "uniqueItems": True}, None, "At most 1 item; no duplicate items."),
        ({"minProperties": 2, "maxProperties": 4}, None, "Between 2 and 4 keys."),
        (
            {"enum": [True, None], "examples": ["a b", " c"]},
            None,
            'One of true, null; for example a b, " c".',
        ),
        ({"const": "x", "default": "x"}, "Fixed.", "Fixed. Always x; default x."),
        ({}, "Plain", "Plain"),
        ({}, None, None),
    ],
)
def test_constraints_in_words(node: dict[str, Any], description: Any, expected: Any) -> None:
    assert described(description, words(node, DESCRIBED)) == expected


# ---------------------------------------------------------- hand-written schemas, reshaped

EXPLICIT = {
    "type": "object",
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Put",
    "properties": {
        "item": {"$ref": "#/$defs/Item", "description": "The item."},
        "mode": {"const": "fast"},
        "shape": {"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]},
        "extra": {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer", "examples": [1]}}},
            ]
        },
        "level": {"type": "integer", "enum": [1, 2, 4]},
        "size": {"type": "number", "exclusiveMinimum": 0.5, "minimum": 0},
    },
    "required": ["item", "mode"],
    "$defs": {
        "Item": {
            "type": "object",
            "title": "Item",
            "properties": {"id": {"type": "string", "format": "email"}},
            "required": ["id"],
        }
    },
}
"""$ref with a sibling, const, oneOf with null, allOf, an integer enum, two lower bounds."""

EXPLICIT_PORTABLE = {
    "type": "object",
    "properties": {
        "item": {
            "type": "object",
            "description": "The item.",
            "properties": {"id": {"type": "string", "description": "Format: email."}},
            "required": ["id"],
        },
        "mode": {"type": "string", "enum": ["fast"]},
        "shape": {"type": "string", "enum": ["a"]},
        "extra": {
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "integer", "description": "For example 1."},
            },
            "required": ["a"],
        },
        "level": {"type": "integer", "description": "One of 1, 2, 4."},
        "size": {
            "type": "number",
            "description": "At least 0 and greater than 0.5.",
            "minimum": 0.5,
        },
    },
    "required": ["item", "mode"],
}

EXPLICIT_STRICT = {
    "type": "object",
    "properties": {
        "item": {"anyOf": [{"$ref": "#/$defs/Item"}], "description": "The item."},
        "mode": {"const": "fast"},
        "shape": {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]},
        "extra": {
            "type": ["object", "null"],
            "properties": {
                "a": {"type": "string"},
                "b": {"type": ["integer", "null"], "description": "For example 1."},
            },
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        "level": {"anyOf": [{"type": "integer", "enum": [1, 2, 4]}, {"type": "null"}]},
        "size": {"type": ["number", "null"], "exclusiveMinimum": 0.5, "minimum": 0},
    },
    "required": ["item", "mode", "shape", "extra", "level", "size"],
    "additionalProperties": False,
    "$defs": {
        "Item": {
            "type": "object",
            "properties": {"id": {"type": "string", "format": "email"}},
            "required": ["id"],
            "additionalProperties": False,
        }
    },
}


@pytest.mark.parametrize(
    ("profile", "target", "expected"),
    [
        ("portable", "portable", EXPLICIT_PORTABLE),
        ("openai-strict", "openai-strict", EXPLICIT_STRICT),
    ],
)
def test_explicit_schema_keywords(profile: Any, target: str, expected: dict[str, Any]) -> None:
    def put(**arguments: Any) -> str:
        """Put."""
        return "ok"

    schema = Tool(put, input_schema=EXPLICIT, schema_profile=profile).input_schema
    assert schema == expected
    assert provider_findings(schema, target) == []
    assert provider_findings(EXPLICIT, target) != []


def test_openai_strict_null_inside_a_recursive_type() -> None:
    def count(tree: Node) -> int:
        """Count the nodes."""
        return 1 + sum(count(child) for child in tree.children)

    app = App("trees", "1", options=ServerOptions(schema_profile="openai-strict"))
    app.add_tool(count)
    tree = {"name": "a", "children": [{"name": "b", "children": None}, {"name": "c"}]}
    with Client(app) as client:
        assert client.call_tool("count", {"tree": tree}).data == 3
        refused = client.call_tool("count", {"tree": {"name": None, "children": None}})
    assert refused["content"][0]["text"] == (
        "Invalid arguments for tool 'count':\n- tree.name: expected string; received null"
    )
