"""Schema profiles: what each profile publishes for a battery of types (literal outputs), that
each output passes its providers' rules tables, what a profile refuses at definition time, and
that validation keeps the real types."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from profile_types import BATTERY, Address, Node
from pydantic import BaseModel, Field

from mcpkit import App, DefinitionError, Header, InvalidArguments, ServerOptions
from mcpkit._frozen import frozen
from mcpkit._profile_words import DESCRIBED, described, words
from mcpkit.docgen.providers import provider_findings
from mcpkit.schema import EMPTY
from mcpkit.testing import Client
from mcpkit.tools import Tool


@frozen
class Refused:
    """What a profile says it cannot publish about parameter ``$.x``."""

    text: str


def tool_of(annotation: Any, default: Any, profile: Any) -> Tool:
    """A tool ``x(x: annotation = default)`` documented "The value.", in ``profile``."""

    def x(x: Any) -> str:
        return ""

    x.__annotations__ = {"x": annotation, "return": str}
    if default is not EMPTY:
        x.__defaults__ = (default,)
    x.__doc__ = "T.\n\nArgs:\n    x: The value.\n"
    return Tool(x, schema_profile=profile)


ADDRESS = {
    "properties": {
        "street": {"type": "string", "description": "Street and number"},
        "zip": {
            "type": "string",
            "description": "Matching the regular expression ^\\d{5}$.",
            "pattern": "^\\d{5}$",
        },
        "floor": {"type": "integer"},
    },
    "required": ["street", "zip"],
}
"""Address's fields as the portable profile publishes them (the zip pattern said in words)."""

PORTABLE: dict[str, Any] = {
    "str": ({"type": "string", "description": "The value."}, True),
    "bool-default": (
        {"type": "boolean", "description": "The value. Default false.", "default": False},
        False,
    ),
    "int-bounds": (
        {
            "type": "integer",
            "description": "The value. Between 1 and 50; default 10.",
            "minimum": 1,
            "maximum": 50,
            "default": 10,
        },
        False,
    ),
    "float-exclusive": (
        {
            "type": "number",
            "description": "The value. Greater than 0 and less than 1; a multiple of 0.25.",
            "minimum": 0,
            "maximum": 1,
        },
        True,
    ),
    "int-exclusive": (
        {
            "type": "integer",
            "description": "The value. Greater than 0 and less than 10.",
            "minimum": 1,
            "maximum": 9,
        },
        True,
    ),
    "str-length": (
        {
            "type": "string",
            (
                "description"
            ): "The value. Between 1 and 50 characters; matching the regular expression ^[a-z]+$.",
            "minLength": 1,
            "maxLength": 50,
            "pattern": "^[a-z]+$",
        },
        True,
    ),
    "optional-none": ({"type": "string", "description": "The value."}, False),
    "optional-default": (
        {"type": "integer", "description": "The value. Default 3.", "default": 3},
        False,
    ),
    "literal": (
        {
            "type": "string",
            "description": "The value. Default a.",
            "enum": ["a", "b"],
            "default": "a",
        },
        False,
    ),
    "literal-int": (
        {"type": "integer", "description": "The value. Always 5.", "minimum": 5, "maximum": 5},
        True,
    ),
    "enum": (
        {
            "type": "string",
            "description": "The value. Default red.",
            "enum": ["red", "green"],
            "default": "red",
        },
        False,
    ),
    "int-enum": (
        {"type": "integer", "description": "The value. One of 1, 2.", "minimum": 1, "maximum": 2},
        True,
    ),
    "model": ({"type": "object", "description": "The value.", **ADDRESS}, True),
    "list-of-models": (
        {
            "type": "array",
            "description": "The value.",
            "items": {"type": "object", "description": "A postal address.", **ADDRESS},
        },
        True,
    ),
    "list-bounds": (
        {
            "type": "array",
            "description": "The value. Between 1 and 3 items.",
            "items": {"type": "integer"},
            "minItems": 1,
            "maxItems": 3,
        },
        True,
    ),
    "set": (
        {
            "type": "array",
            "description": "The value. No duplicate items.",
            "items": {"type": "string"},
        },
        True,
    ),
    "date-time": (
        {"type": "string", "description": "The value. Format: date-time.", "format": "date-time"},
        True,
    ),
    "uuid": ({"type": "string", "description": "The value. Format: uuid."}, True),
    "uri": (
        {
            "type": "string",
            "description": "The value. At least 1 character; format: uri.",
            "minLength": 1,
        },
        True,
    ),
    "dict": Refused(
        "an object without named properties (dict[str, T], Any, an open object): Gemini needs"
        " non-empty properties (vercel/ai#3371); use a list of {key, value} objects or a JSON"
        " string"
    ),
    "union": Refused(
        "a union of 2 types, which Gemini refuses beside a type and clients cut to its first "
        "member (LibreChat PR#13850); make it one type: one object with a string-enum field "
        "saying which kind, the other fields optional (or split the tool)"
    ),
    "tuple": Refused("a tuple (prefixItems), which Gemini cannot take ([LC-13850]); use an object"),
    "any": Refused(
        "no type (any JSON value): Gemini needs a type on every property "
        "(P0luz/Ombre-Brain#119); give the parameter a type"
    ),
    "recursive": Refused(
        "a recursive type (Node contains itself), which Gemini and Anthropic's strict mode "
        "cannot take ([pyd-goo], [ANT-SO]); give it a fixed depth or pass the tree as a JSON "
        "string"
    ),
}
STRICT_ADDRESS = {
    "properties": {
        "street": {"type": "string", "description": "Street and number"},
        "zip": {"type": "string", "pattern": "^\\d{5}$"},
        "floor": {"type": ["integer", "null"]},
    },
    "required": ["street", "zip", "floor"],
    "additionalProperties": False,
}
"""Address's fields in openai-strict: closed, all required, the optional floor nullable."""

STRICT: dict[str, Any] = {
    "str": {"type": "string", "description": "The value."},
    "bool-default": {"type": ["boolean", "null"], "description": "The value. Default false."},
    "int-bounds": {
        "type": ["integer", "null"],
        "maximum": 50,
        "minimum": 1,
        "description": "The value. Default 10.",
    },
    "float-exclusive": {
        "type": "number",
        "exclusiveMaximum": 1,
        "exclusiveMinimum": 0,
        "multipleOf": 0.25,
        "description": "The value.",
    },
    "int-exclusive": {
        "type": "integer",
        "exclusiveMaximum": 10,
        "exclusiveMinimum": 0,
        "description": "The value.",
    },
    "str-length": {
        "type": "string",
        "pattern": "^[a-z]+$",
        "description": "The value. Between 1 and 50 characters.",
    },
    "optional-none": {"type": ["string", "null"], "description": "The value."},
    "optional-default": {
        "description": "The value. Default 3.",
        "anyOf": [{"type": "integer"}, {"type": "null"}],
    },
    "literal": {
        "anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}],
        "description": "The value. Default a.",
    },
    "literal-int": {"type": "integer", "const": 5, "description": "The value."},
    "enum": {
        "anyOf": [{"type": "string", "enum": ["red", "green"]}, {"type": "null"}],
        "description": "The value. Default red.",
    },
    "int-enum": {"type": "integer", "enum": [1, 2], "description": "The value."},
    "model": {"type": "object", "description": "The value.", **STRICT_ADDRESS},
    "list-of-models": {
        "type": "array",
        "description": "The value.",
        "items": {"type": "object", "description": "A postal address.", **STRICT_ADDRESS},
    },
    "list-bounds": {
        "type": "array",
        "maxItems": 3,
        "minItems": 1,
        "description": "The value.",
        "items": {"type": "integer"},
    },
    "set": {
        "type": "array",
        "description": "The value. No duplicate items.",
        "items": {"type": "string"},
    },
    "date-time": {"type": "string", "format": "date-time", "description": "The value."},
    "uuid": {"type": "string", "format": "uuid", "description": "The value."},
    "uri": {"type": "string", "description": "The value. At least 1 character; format: uri."},
    "dict": Refused(
        "an object without named properties (dict[str, T], Any, extra keys allowed), which "
        "strict mode cannot express ([OAI-SO], [oa-agents]); use a list of {key, value} "
        "objects, a model, or a JSON string"
    ),
    "union": {"description": "The value.", "anyOf": [{"type": "integer"}, {"type": "string"}]},
    "tuple": Refused("an array of untyped items or a tuple, which strict mode refuses ([pyd-oai])"),
    "any": Refused("no type (any JSON value), which strict mode refuses ([OAI-SO]); type it"),
    "recursive": {
        "type": "object",
        "properties": {"x": {"anyOf": [{"$ref": "#/$defs/Node"}], "description": "The value."}},
        "required": ["x"],
        "additionalProperties": False,
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {
                        "type": ["array", "null"],
                        "description": "Default [].",
                        "items": {"$ref": "#/$defs/Node"},
                    },
                },
                "required": ["name", "children"],
                "additionalProperties": False,
            }
        },
    },
}


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
    ("arguments", "text"),
    [
        pytest.param(
            {"query": ""}, '- query: expected at least 1 characters; received ""', id="len"
        ),
        pytest.param(
            {"query": "a", "limit": 300}, "- limit: expected <= 50; received 300", id="max"
        ),
        pytest.param({"query": None}, "- query: expected string; received null", id="null"),
        pytest.param(
            {"query": "a", "filters": {"size": "3"}},
            '- filters.size: expected integer; received "3"',
            id="nested",
        ),
    ],
)
def test_validation_keeps_the_real_constraints(
    name: str, arguments: dict[str, Any], text: str
) -> None:
    with Client(profiled_app()) as client:
        result = client.call_tool(name, arguments)
    assert result == {
        "content": [{"type": "text", "text": f"Invalid arguments for tool {name!r}:\n{text}"}],
        "isError": True,
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
