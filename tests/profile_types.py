"""A battery of parameter types for the schema-profile tests (``(id, annotation, default)``)
and what each profile publishes for them: the property ``x`` of ``x(x: annotation = default)``
documented "The value.", or what the profile says it cannot publish."""

from __future__ import annotations

import datetime
import enum
import uuid
from typing import Annotated, Any, Literal

from pydantic import AnyUrl, BaseModel, Field

from mcpkit._frozen import frozen
from mcpkit.schema import EMPTY


class Color(enum.Enum):
    """A colour."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number")
    zip: Annotated[str, Field(pattern=r"^\d{5}$")]
    floor: int | None = None


class Node(BaseModel):
    name: str
    children: list[Node] = []


BATTERY: list[tuple[str, Any, Any]] = [
    ("str", str, EMPTY),
    ("bool-default", bool, False),
    ("int-bounds", Annotated[int, Field(ge=1, le=50)], 10),
    ("float-exclusive", Annotated[float, Field(gt=0, lt=1, multiple_of=0.25)], EMPTY),
    ("int-exclusive", Annotated[int, Field(gt=0, lt=10)], EMPTY),
    ("str-length", Annotated[str, Field(min_length=1, max_length=50, pattern=r"^[a-z]+$")], EMPTY),
    ("optional-none", str | None, None),
    ("optional-default", int | None, 3),
    ("literal", Literal["a", "b"], "a"),
    ("literal-int", Literal[5], EMPTY),
    ("enum", Color, Color.RED),
    ("int-enum", Level, EMPTY),
    ("model", Address, EMPTY),
    ("list-of-models", list[Address], EMPTY),
    ("list-bounds", Annotated[list[int], Field(min_length=1, max_length=3)], EMPTY),
    ("set", set[str], EMPTY),
    ("date-time", datetime.datetime, EMPTY),
    ("uuid", uuid.UUID, EMPTY),
    ("uri", AnyUrl, EMPTY),
    ("dict", dict[str, int], EMPTY),
    ("union", int | str, EMPTY),
    ("tuple", tuple[int, str], EMPTY),
    ("any", Any, EMPTY),
    ("recursive", Node, EMPTY),
]


@frozen
class Refused:
    """What a profile says it cannot publish about parameter ``$.x``."""

    text: str


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
