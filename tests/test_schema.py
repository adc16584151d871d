"""Type hints -> published JSON Schemas (``mcpkit.schema``), asserted as exact JSON values."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import inspect
import pathlib
import re
import sys
import typing
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, Literal, NewType, Optional

import pytest
import typing_extensions
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from mcpkit import _docstrings
from mcpkit.schema import EMPTY, clean_schema, subschemas
from mcpkit.tools import Tool

# ------------------------------------------------------------------------------ helpers


def make_tool(
    params: dict[str, Any], defaults: dict[str, Any] | None = None, doc: str | None = None
) -> Tool:
    """A tool whose keyword-only parameters have the given (evaluated) annotations."""

    def fn(**kwargs: Any) -> None:
        return None

    defaults = defaults or {}
    kind = inspect.Parameter.KEYWORD_ONLY
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(name, kind, default=defaults.get(name, EMPTY), annotation=tp)
            for name, tp in params.items()
        ]
    )
    fn.__annotations__ = dict(params)
    fn.__doc__ = doc
    return Tool(fn, name="t")


def prop(tp: Any, default: Any = EMPTY) -> dict[str, Any]:
    """The published property schema of one parameter ``x: tp [= default]``."""
    schema = make_tool({"x": tp}, {} if default is EMPTY else {"x": default}).input_schema
    result: dict[str, Any] = schema["properties"]["x"]
    return result


def keywords(schema: Any, name: str) -> Iterator[Any]:
    """Every value of keyword ``name`` in a schema, walking by keyword (not property names)."""
    if isinstance(schema, dict):
        if name in schema:
            yield schema[name]
        for child in subschemas(schema):
            yield from keywords(child, name)


# -------------------------------------------------------------------------------- types


class Color(enum.Enum):
    red = "red"
    green = "green"


class Level(enum.IntEnum):
    low = 1
    high = 2


class Arch(str, enum.Enum):
    arm64 = "arm64"
    x86_64 = "x86_64"


class Cat(BaseModel):
    kind: Literal["cat"]
    meows: int


class Dog(BaseModel):
    kind: Literal["dog"]
    barks: bool


Pet = Annotated[Cat | Dog, Field(discriminator="kind")]


class Point(BaseModel):
    x: int
    y: int = 0


@dataclasses.dataclass
class Size:
    width: int
    unit: str = "px"


class Options(typing_extensions.TypedDict):
    verbose: bool
    level: typing_extensions.NotRequired[int]


class StdOptions(typing.TypedDict):
    verbose: bool
    tags: list[str]


class StdPartial(typing.TypedDict, total=False):
    limit: int


class StdTree(typing.TypedDict):
    name: str
    children: list[StdTree]


class Keywords(typing_extensions.TypedDict):
    title: str
    description: str
    default: int


class KeywordModel(BaseModel):
    title: str
    description: str = "d"
    default: int | None = None


class Tree(BaseModel):
    value: int
    children: list[Tree] = []


class Titled(BaseModel):
    name: str = Field(title="Display name")


class Documented(BaseModel):
    """A documented model."""

    a: int


UserId = NewType("UserId", int)

STRING_ENUM: dict[str, Any] = {"type": "string", "enum": ["red", "green"]}

if sys.version_info >= (3, 11):

    class Mode(enum.StrEnum):
        fast = "fast"
        safe = "safe"

    STR_ENUM_CASES = [
        pytest.param(Mode, {"type": "string", "enum": ["fast", "safe"]}, id="StrEnum")
    ]
else:  # pragma: no cover - 3.10
    STR_ENUM_CASES: list[Any] = []


TYPE_CASES = [
    pytest.param(int, {"type": "integer"}, id="int"),
    pytest.param(float, {"type": "number"}, id="float"),
    pytest.param(str, {"type": "string"}, id="str"),
    pytest.param(bool, {"type": "boolean"}, id="bool"),
    pytest.param(Color, STRING_ENUM, id="Enum"),
    pytest.param(Level, {"type": "integer", "enum": [1, 2]}, id="IntEnum"),
    pytest.param(Arch, {"type": "string", "enum": ["arm64", "x86_64"]}, id="str-Enum"),
    *STR_ENUM_CASES,
    pytest.param(Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}, id="Literal-str"),
    pytest.param(Literal[1, 2], {"type": "integer", "enum": [1, 2]}, id="Literal-int"),
    pytest.param(Literal["only"], {"type": "string", "const": "only"}, id="Literal-one"),
    pytest.param(datetime.datetime, {"type": "string", "format": "date-time"}, id="datetime"),
    pytest.param(datetime.date, {"type": "string", "format": "date"}, id="date"),
    pytest.param(datetime.time, {"type": "string", "format": "time"}, id="time"),
    pytest.param(datetime.timedelta, {"type": "string", "format": "duration"}, id="timedelta"),
    pytest.param(uuid.UUID, {"type": "string", "format": "uuid"}, id="UUID"),
    pytest.param(pathlib.Path, {"type": "string", "format": "path"}, id="Path"),
    pytest.param(
        decimal.Decimal, {"anyOf": [{"type": "number"}, {"type": "string"}]}, id="Decimal"
    ),
    pytest.param(UserId, {"type": "integer"}, id="NewType"),
    pytest.param(list[int], {"type": "array", "items": {"type": "integer"}}, id="list"),
    pytest.param(
        tuple[int, str],
        {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "minItems": 2,
            "maxItems": 2,
        },
        id="tuple-fixed",
    ),
    pytest.param(tuple[int, ...], {"type": "array", "items": {"type": "integer"}}, id="tuple-var"),
    pytest.param(
        set[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, id="set"
    ),
    pytest.param(
        frozenset[str],
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        id="frozenset",
    ),
    pytest.param(
        dict[str, int],
        {"type": "object", "additionalProperties": {"type": "integer"}},
        id="dict",
    ),
    pytest.param(int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}, id="union"),
    pytest.param(
        Optional[int],  # noqa: UP045 - the spelling under test
        {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        id="Optional-no-default",
    ),
    pytest.param(
        Color | None, {"anyOf": [STRING_ENUM, {"type": "null"}]}, id="optional-enum-no-default"
    ),
    pytest.param(
        Annotated[int, Field(ge=0, le=10)],
        {"type": "integer", "minimum": 0, "maximum": 10},
        id="ge-le",
    ),
    pytest.param(
        Annotated[float, Field(gt=0, lt=1, multiple_of=0.25)],
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.25},
        id="gt-lt-multiple_of",
    ),
    pytest.param(
        Annotated[str, Field(min_length=1, max_length=5, pattern="^a")],
        {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^a"},
        id="string-constraints",
    ),
    pytest.param(
        Annotated[list[int], Field(min_length=1, max_length=3)],
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
        id="list-constraints",
    ),
    pytest.param(
        Point,
        {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
            "required": ["x"],
        },
        id="model",
    ),
    pytest.param(
        Size,
        {
            "type": "object",
            "properties": {
                "width": {"type": "integer"},
                "unit": {"type": "string", "default": "px"},
            },
            "required": ["width"],
            "additionalProperties": False,
        },
        id="dataclass",
    ),
    pytest.param(
        Options,
        {
            "type": "object",
            "properties": {"verbose": {"type": "boolean"}, "level": {"type": "integer"}},
            "required": ["verbose"],
            "additionalProperties": False,
        },
        id="TypedDict-typing_extensions",
    ),
    pytest.param(
        StdOptions,
        {
            "type": "object",
            "properties": {
                "verbose": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["verbose", "tags"],
            "additionalProperties": False,
        },
        id="TypedDict-stdlib",
    ),
    pytest.param(
        StdPartial,
        {
            "type": "object",
            "properties": {"limit": {"type": "integer"}},
            "additionalProperties": False,
        },
        id="TypedDict-stdlib-total-False",
    ),
    pytest.param(
        list[StdOptions] | None,
        {
            "anyOf": [
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "verbose": {"type": "boolean"},
                            "tags": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["verbose", "tags"],
                        "additionalProperties": False,
                    },
                },
                {"type": "null"},
            ]
        },
        id="TypedDict-stdlib-nested",
    ),
    pytest.param(
        Pet,
        {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "const": "cat"},
                        "meows": {"type": "integer"},
                    },
                    "required": ["kind", "meows"],
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "const": "dog"},
                        "barks": {"type": "boolean"},
                    },
                    "required": ["kind", "barks"],
                },
            ],
            "discriminator": {"propertyName": "kind"},
        },
        id="discriminated-union",
    ),
    pytest.param(
        Keywords,
        {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "description": {"type": "string"},
                "default": {"type": "integer"},
            },
            "required": ["title", "description", "default"],
            "additionalProperties": False,
        },
        id="TypedDict-keyword-names",
    ),
    pytest.param(
        KeywordModel,
        {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "description": {"type": "string", "default": "d"},
                "default": {"type": "integer"},
            },
            "required": ["title"],
        },
        id="model-keyword-names",
    ),
    pytest.param(
        Titled,
        {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Display name"}},
            "required": ["name"],
        },
        id="user-title-kept",
    ),
    pytest.param(
        Documented,
        {
            "type": "object",
            "description": "A documented model.",
            "properties": {"a": {"type": "integer"}},
            "required": ["a"],
        },
        id="model-docstring",
    ),
    pytest.param(
        Annotated[int, Field(title="Count")],
        {"type": "integer", "title": "Count"},
        id="field-title",
    ),
]


@pytest.mark.parametrize(("tp", "expected"), TYPE_CASES)
def test_type_schema(tp: Any, expected: dict[str, Any]) -> None:
    assert prop(tp) == expected


@pytest.mark.parametrize(("tp", "expected"), TYPE_CASES)
def test_no_invented_titles(tp: Any, expected: dict[str, Any]) -> None:
    schema = make_tool({"x": tp}).input_schema
    user_titles = list(keywords(expected, "title"))
    assert list(keywords(schema, "title")) == user_titles
    assert "$defs" not in schema


# ---------------------------------------------------------------------- root and defaults


def test_root_shape() -> None:
    schema = make_tool({"a": int, "b": str}, {"b": "x"}).input_schema
    assert schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string", "default": "x"}},
        "required": ["a"],
    }


def test_no_parameters() -> None:
    assert make_tool({}).input_schema == {"type": "object", "properties": {}}


OPTIONAL_CASES = [
    pytest.param(int | None, None, {"type": "integer"}, id="int-or-None=None"),
    pytest.param(Optional[str], None, {"type": "string"}, id="Optional=None"),  # noqa: UP045
    pytest.param(Color | None, None, STRING_ENUM, id="enum=None"),
    pytest.param(
        int | str | None,
        None,
        {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        id="union=None",
    ),
    pytest.param(
        Annotated[int | None, Field(description="how many")],
        None,
        {"type": "integer", "description": "how many"},
        id="annotated=None",
    ),
    pytest.param(
        int | None, 5, {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5}, id="opt=5"
    ),
    pytest.param(Color, Color.green, {**STRING_ENUM, "default": "green"}, id="enum-default"),
    pytest.param(
        list[int],
        [1],
        {"type": "array", "items": {"type": "integer"}, "default": [1]},
        id="list-default",
    ),
    pytest.param(bool, False, {"type": "boolean", "default": False}, id="bool-default"),
    pytest.param(
        datetime.date,
        datetime.date(2024, 1, 2),
        {"type": "string", "format": "date", "default": "2024-01-02"},
        id="date-default",
    ),
]


@pytest.mark.parametrize(("tp", "default", "expected"), OPTIONAL_CASES)
def test_defaults(tp: Any, default: Any, expected: dict[str, Any]) -> None:
    schema = make_tool({"x": tp}, {"x": default}).input_schema
    assert schema == {"type": "object", "properties": {"x": expected}}


def test_optional_without_default_is_required() -> None:
    schema = make_tool({"x": int | None}).input_schema
    assert schema["required"] == ["x"]
    assert schema["properties"]["x"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


# ---------------------------------------------------------------------- recursion and refs


def test_recursive_model_keeps_defs() -> None:
    schema = make_tool({"tree": Tree}).input_schema
    assert schema == {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Tree"}},
        "required": ["tree"],
        "$defs": {
            "Tree": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}, "default": []},
                },
                "required": ["value"],
            }
        },
    }


def test_recursive_stdlib_typeddict() -> None:
    schema = make_tool({"tree": StdTree}).input_schema
    assert schema["$defs"] == {
        "StdTree": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/StdTree"}},
            },
            "required": ["name", "children"],
            "additionalProperties": False,
        }
    }


def test_recursive_return_type_is_published_at_root() -> None:
    def grow() -> Tree:
        return Tree(value=1)

    assert Tool(grow).output_schema == {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}, "default": []},
        },
        "required": ["value"],
        "$defs": {
            "Tree": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}, "default": []},
                },
                "required": ["value"],
            }
        },
    }


# This module uses ``from __future__ import annotations``: every annotation below is a string,
# and ``Later`` is defined after the function that names it.
def uses_later(item: Later, items: list[Later] | None = None) -> Later:
    return item


class Later(BaseModel):
    n: int


def test_future_annotations_and_forward_references() -> None:
    tool = Tool(uses_later)
    later = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert tool.input_schema == {
        "type": "object",
        "properties": {"item": later, "items": {"type": "array", "items": later}},
        "required": ["item"],
    }
    assert tool.output_schema == later


# ------------------------------------------------------------------------- descriptions


GOOGLE = """Build the project.

    Compiles everything.

    Args:
        target: Where the build
            goes.
        jobs: How many jobs.

    Returns:
        The result.
    """

NUMPY = """Build the project.

    Parameters
    ----------
    target : str
        Where the build goes.
    jobs : int
        How many jobs.
    """

REST = """Build the project.

    :param target: Where the build goes.
    :param jobs: How many jobs.
    :returns: The result.
    """


@pytest.mark.parametrize(
    ("doc", "description"),
    [
        pytest.param(GOOGLE, "Build the project.\n\nCompiles everything.", id="google"),
        pytest.param(NUMPY, "Build the project.", id="numpy"),
        pytest.param(REST, "Build the project.", id="rest"),
    ],
)
def test_docstring_styles(doc: str, description: str) -> None:
    tool = make_tool({"target": str, "jobs": int}, doc=doc)
    assert tool.definition["description"] == description
    assert tool.input_schema["properties"] == {
        "target": {"type": "string", "description": "Where the build goes."},
        "jobs": {"type": "integer", "description": "How many jobs."},
    }


SECTION_PIECES = ["Args", "Arguments", "Params", "Parameters", "Keyword Args", "Returns", "Raises"]
SECTION_PIECES += ["Yields", "Example", "Examples", ":param", ":arg", ":key", ":type", ":return"]
SECTION_PIECES += [":raises", ":", "\n", " ", "\t", "x", "Arg", "Ret", "Exa", "aram"]


@given(st.lists(st.sampled_from(SECTION_PIECES), max_size=12).map("".join))
def test_the_docstring_word_check_only_skips_what_the_section_pattern_would(text: str) -> None:
    """The words checked first never let a parameter section through unparsed: every text the
    section pattern finds a section in has one of them."""
    if re.search(_docstrings._SECTION_HINT, text, re.MULTILINE):
        assert any(word in text for word in _docstrings._SECTION_WORDS)


def test_plain_docstring_is_cleaned() -> None:
    tool = make_tool({}, doc="First line.\n\n        Second paragraph,\n          indented.\n    ")
    assert tool.definition["description"] == "First line.\n\nSecond paragraph,\n  indented."


def test_explicit_descriptions_win_over_docstring() -> None:
    tool = make_tool(
        {
            "target": Annotated[str, Field(description="from Field")],
            "jobs": Annotated[int, "from Annotated"],
        },
        doc=GOOGLE,
    )
    assert tool.input_schema["properties"] == {
        "target": {"type": "string", "description": "from Field"},
        "jobs": {"type": "integer", "description": "from Annotated"},
    }


def test_no_docstring_no_description() -> None:
    tool = make_tool({"a": int})
    assert "description" not in tool.definition
    assert tool.input_schema["properties"] == {"a": {"type": "integer"}}


# ------------------------------------------------------------------ clean_schema (pure)


CLEAN_CASES = [
    pytest.param(
        {
            "$defs": {"Color": {"title": "Color", "type": "string", "enum": ["r"]}},
            "properties": {"c": {"$ref": "#/$defs/Color", "default": "r"}},
            "title": "Args",
            "type": "object",
            "additionalProperties": False,
            "required": [],
        },
        {"type": "object", "properties": {"c": {"type": "string", "enum": ["r"], "default": "r"}}},
        id="inline-merge-siblings",
    ),
    pytest.param(
        {
            "type": "object",
            "properties": {"title": {"title": "Title", "type": "string"}},
            "required": ["title"],
        },
        {
            "type": "object",
            "properties": {"title": {"title": "Title", "type": "string"}},
            "required": ["title"],
        },
        id="property-titles-are-not-class-titles",
    ),
    pytest.param(
        {
            "$defs": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
                "C": {"title": "C", "type": "integer"},
            },
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "c": {"$ref": "#/$defs/C"}},
        },
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "c": {"type": "integer"}},
            "$defs": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
            },
        },
        id="mutual-recursion-kept",
    ),
    pytest.param(
        {
            "$defs": {
                "Cat": {"title": "Cat", "type": "object", "properties": {}},
                "Dog": {"title": "Dog", "type": "object", "properties": {}},
            },
            "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
            "discriminator": {
                "propertyName": "kind",
                "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"},
            },
        },
        {
            "oneOf": [
                {"type": "object", "properties": {}},
                {"type": "object", "properties": {}},
            ],
            "discriminator": {"propertyName": "kind"},
        },
        id="discriminator-mapping-dropped-when-inlined",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), CLEAN_CASES)
def test_clean_schema(raw: dict[str, Any], expected: dict[str, Any]) -> None:
    assert clean_schema(raw) == expected


def test_clean_schema_strip_optional() -> None:
    raw = {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "default": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["default"],
    }
    assert clean_schema(raw, strip_optional=True) == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "default": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["default"],
    }


def test_clean_schema_is_pure() -> None:
    raw: dict[str, Any] = {
        "$defs": {"C": {"title": "C", "type": "integer"}},
        "type": "object",
        "properties": {"c": {"$ref": "#/$defs/C"}},
    }
    snapshot = repr(raw)
    clean_schema(raw)
    assert repr(raw) == snapshot


def test_schema_is_built_once() -> None:
    tool = make_tool({"a": int})
    assert tool.definition is tool.definition
    assert tool.input_schema is tool.definition["inputSchema"]
