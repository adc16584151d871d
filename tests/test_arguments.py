"""Argument validation: the published schema is the contract (checked with ``jsonschema`` too)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import inspect
import pathlib
import uuid
from typing import Annotated, Any, Literal, Optional

import jsonschema
import pytest
import typing_extensions
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from mcpkit.exceptions import InvalidArguments
from mcpkit.schema import EMPTY
from mcpkit.tools import Tool


def make_tool(params: dict[str, Any], defaults: dict[str, Any] | None = None) -> Tool:
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
    return Tool(fn, name="t")


def detail_of(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(InvalidArguments) as caught:
        tool.validate(arguments)
    assert caught.value.tool == "t"
    return caught.value.detail


def schema_accepts(tool: Tool, arguments: dict[str, Any]) -> bool:
    return bool(jsonschema.Draft202012Validator(tool.input_schema).is_valid(arguments))


class Color(enum.Enum):
    red = "red"
    green = "green"


class Level(enum.IntEnum):
    low = 1
    high = 2


class Point(BaseModel):
    x: int
    y: int = 0


class Line(BaseModel):
    start: Point
    end: Point


@dataclasses.dataclass
class Size:
    width: int


class Options(typing_extensions.TypedDict):
    verbose: bool


class Cat(BaseModel):
    kind: Literal["cat"]
    meows: int


class Dog(BaseModel):
    kind: Literal["dog"]
    barks: bool


Pet = Annotated[Cat | Dog, Field(discriminator="kind")]


class Loose(BaseModel):
    a: int


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


UTC = datetime.timezone.utc
AN_ID = "12345678-1234-5678-1234-567812345678"

# (type, JSON value sent, the value the function receives)
ACCEPTED = [
    pytest.param(int, 5, 5, id="int"),
    pytest.param(float, 5, 5.0, id="int-for-float"),
    pytest.param(float, 2.5, 2.5, id="float"),
    pytest.param(str, "a", "a", id="str"),
    pytest.param(bool, True, True, id="bool"),
    pytest.param(Color, "red", Color.red, id="Enum"),
    pytest.param(Level, 2, Level.high, id="IntEnum"),
    pytest.param(Literal["a", "b"], "b", "b", id="Literal"),
    pytest.param(
        datetime.datetime,
        "2024-01-02T03:04:05Z",
        datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        id="datetime-ISO",
    ),
    pytest.param(datetime.date, "2024-01-02", datetime.date(2024, 1, 2), id="date"),
    pytest.param(datetime.time, "03:04:05", datetime.time(3, 4, 5), id="time"),
    pytest.param(datetime.timedelta, "PT1S", datetime.timedelta(seconds=1), id="timedelta"),
    pytest.param(uuid.UUID, AN_ID, uuid.UUID(AN_ID), id="UUID"),
    pytest.param(decimal.Decimal, "1.5", decimal.Decimal("1.5"), id="Decimal-string"),
    pytest.param(pathlib.Path, "a/b", pathlib.Path("a/b"), id="Path"),
    pytest.param(list[int], [1, 2], [1, 2], id="list"),
    pytest.param(tuple[int, str], [1, "a"], (1, "a"), id="tuple"),
    pytest.param(set[int], [1, 2], {1, 2}, id="set"),
    pytest.param(dict[str, int], {"a": 1}, {"a": 1}, id="dict"),
    pytest.param(int | str, "a", "a", id="union-str"),
    pytest.param(int | str, 1, 1, id="union-int"),
    pytest.param(Point, {"x": 1}, Point(x=1), id="model"),
    pytest.param(Size, {"width": 1}, Size(width=1), id="dataclass"),
    pytest.param(Options, {"verbose": True}, {"verbose": True}, id="TypedDict"),
    pytest.param(Pet, {"kind": "dog", "barks": True}, Dog(kind="dog", barks=True), id="tagged"),
    pytest.param(Annotated[int, Field(ge=0, le=10)], 10, 10, id="bounds"),
    pytest.param(Annotated[str, Field(pattern="^a")], "abc", "abc", id="pattern"),
    pytest.param(int | None, None, None, id="null-for-Optional"),
]


@pytest.mark.parametrize(("tp", "sent", "received"), ACCEPTED)
def test_accepted(tp: Any, sent: Any, received: Any) -> None:
    tool = make_tool({"x": tp})
    values = tool.validate({"x": sent})
    assert values == {"x": received}
    assert type(values["x"]) is type(received)
    assert schema_accepts(tool, {"x": sent})


def field(name: str, expected: Any, received: Any) -> dict[str, Any]:
    return {"field": name, "expected": expected, "received": received}


# (type, JSON value sent, the detail; every value here the published schema rejects too)
REJECTED = [
    pytest.param(int, "5", field("x", "integer", "5"), id="string-for-integer"),
    pytest.param(int, True, field("x", "integer", True), id="true-for-integer"),
    pytest.param(int, 1.5, field("x", "integer", 1.5), id="float-for-integer"),
    pytest.param(int, None, field("x", "integer", None), id="null-for-integer"),
    pytest.param(str, 5, field("x", "string", 5), id="integer-for-string"),
    pytest.param(bool, 1, field("x", "boolean", 1), id="1-for-boolean"),
    pytest.param(bool, "true", field("x", "boolean", "true"), id="string-for-boolean"),
    pytest.param(set[int], [1, 1], field("x", "unique items", [1, 1]), id="set-duplicates"),
    pytest.param(
        list[set[int]], [[1], [2, 2]], field("x.1", "unique items", [2, 2]), id="nested-set"
    ),
    pytest.param(
        set[int] | None, [1, 1], field("x", "unique items", [1, 1]), id="optional-set-duplicates"
    ),
    pytest.param(
        dict[str, set[int]], {"a": [2, 2]}, field("x.a", "unique items", [2, 2]), id="dict-of-sets"
    ),
    pytest.param(Color, "blue", field("x", ["red", "green"], "blue"), id="Enum"),
    pytest.param(Level, True, field("x", [1, 2], True), id="true-for-IntEnum"),
    pytest.param(Literal["a", 1], True, field("x", ["a", 1], True), id="true-for-Literal-1"),
    pytest.param(Literal[1], True, field("x", [1], True), id="true-for-const-1"),
    pytest.param(list[Level], [1, False], field("x.1", [1, 2], False), id="false-in-list"),
    pytest.param(Level | None, True, field("x", [1, 2], True), id="true-for-optional-IntEnum"),
    pytest.param(Level, 3, field("x", [1, 2], 3), id="IntEnum"),
    pytest.param(Literal["a", "b"], "c", field("x", ["a", "b"], "c"), id="Literal"),
    pytest.param(Annotated[int, Field(ge=0)], -1, field("x", ">= 0", -1), id="ge"),
    pytest.param(Annotated[int, Field(le=10)], 11, field("x", "<= 10", 11), id="le"),
    pytest.param(Annotated[float, Field(gt=0)], 0, field("x", "> 0", 0), id="gt"),
    pytest.param(Annotated[float, Field(lt=1)], 1, field("x", "< 1", 1), id="lt"),
    pytest.param(
        Annotated[int, Field(multiple_of=3)], 4, field("x", "multiple of 3", 4), id="multiple_of"
    ),
    pytest.param(
        Annotated[str, Field(min_length=2)], "a", field("x", "at least 2 characters", "a"), id="min"
    ),
    pytest.param(
        Annotated[str, Field(max_length=2)],
        "abc",
        field("x", "at most 2 characters", "abc"),
        id="max",
    ),
    pytest.param(
        Annotated[str, Field(pattern="^a")],
        "b",
        field("x", "string matching ^a", "b"),
        id="pattern",
    ),
    pytest.param(
        Annotated[list[int], Field(min_length=1)],
        [],
        field("x", "at least 1 items", []),
        id="items",
    ),
    pytest.param(tuple[int, str], [1, 2], field("x.1", "string", 2), id="tuple-member"),
    pytest.param(list[int], [1, "a"], field("x.1", "integer", "a"), id="list-item"),
    pytest.param(dict[str, int], {"a": "b"}, field("x.a", "integer", "b"), id="dict-value"),
    pytest.param(int | str, 1.5, field("x", "integer or string", 1.5), id="union"),
    pytest.param(Point, {"x": "1"}, field("x.x", "integer", "1"), id="model-field"),
    pytest.param(Point, {}, field("x.x", "required", None), id="model-missing"),
    pytest.param(Point, [1], field("x", "object", [1]), id="model-not-object"),
    pytest.param(
        Line, {"start": {"x": 1}, "end": {"x": "a"}}, field("x.end.x", "integer", "a"), id="nested"
    ),
    pytest.param(
        Size, {"width": 1, "w": 2}, field("x.w", "no such field", 2), id="dataclass-extra"
    ),
    pytest.param(Options, {}, field("x.verbose", "required", None), id="TypedDict-missing"),
    pytest.param(
        Options, {"verbose": True, "v": 1}, field("x.v", "no such field", 1), id="TypedDict-extra"
    ),
    pytest.param(
        Closed, {"a": 1, "b": 2}, field("x.b", "no such field", 2), id="model-extra-forbid"
    ),
    pytest.param(Pet, {"kind": "cow"}, field("x.kind", ["cat", "dog"], "cow"), id="tag-unknown"),
    pytest.param(Pet, {"meows": 1}, field("x.kind", ["cat", "dog"], None), id="tag-missing"),
    pytest.param(
        Pet, {"kind": "dog", "barks": 1}, field("x.barks", "boolean", 1), id="tagged-member"
    ),
    pytest.param(
        list[Pet],
        [{"kind": "cat", "meows": "x"}],
        field("x.0.meows", "integer", "x"),
        id="tagged-in-list",
    ),
    pytest.param(
        datetime.date, 20240102, field("x", "date string (YYYY-MM-DD)", 20240102), id="date"
    ),
]


@pytest.mark.parametrize(("tp", "sent", "detail"), REJECTED)
def test_rejected(tp: Any, sent: Any, detail: dict[str, Any]) -> None:
    tool = make_tool({"x": tp})
    assert detail_of(tool, {"x": sent}) == detail
    assert not schema_accepts(tool, {"x": sent})


# The server is stricter than the published schema only where JSON Schema has no word for it.
STRICTER = [
    pytest.param(datetime.datetime, "yesterday", "date-time string (ISO 8601)", id="datetime"),
    pytest.param(uuid.UUID, "not-a-uuid", "UUID string", id="uuid"),
    pytest.param(decimal.Decimal, "abc", "number or numeric string", id="decimal"),
]


@pytest.mark.parametrize(("tp", "sent", "expected"), STRICTER)
def test_formats_are_checked(tp: Any, sent: Any, expected: str) -> None:
    tool = make_tool({"x": tp})
    assert detail_of(tool, {"x": sent}) == field("x", expected, sent)


# ------------------------------------------------------------------------ top level


def test_missing_argument() -> None:
    tool = make_tool({"a": int})
    assert detail_of(tool, {}) == field("a", "required", None)
    assert not schema_accepts(tool, {})


def test_unknown_argument_is_rejected() -> None:
    tool = make_tool({"a": int})
    assert detail_of(tool, {"a": 1, "b": 2}) == field("b", "no such argument", 2)
    assert schema_accepts(tool, {"a": 1, "b": 2})  # the seed-exact schema does not say so


def test_several_failures_first_plus_errors() -> None:
    tool = make_tool({"a": int, "b": str, "c": bool})
    first = field("a", "integer", "1")
    assert detail_of(tool, {"a": "1", "b": 2}) == {
        **first,
        "errors": [first, field("b", "string", 2), field("c", "required", None)],
    }


def test_long_received_values_are_truncated() -> None:
    tool = make_tool({"a": int, "b": int})
    detail = detail_of(tool, {"a": "x" * 500, "b": ["y" * 300]})
    assert detail["received"] == "x" * 200 + "…"
    assert detail["errors"][1]["received"] == '["' + "y" * 198 + "…"


def test_seed_enum_detail() -> None:
    class Arch(str, enum.Enum):
        arm64 = "arm64"
        x86_64 = "x86_64"

    tool = make_tool({"project_dir": str, "arch": Arch})
    assert detail_of(tool, {"project_dir": "./app", "arch": "ARM"}) == {
        "field": "arch",
        "expected": ["arm64", "x86_64"],
        "received": "ARM",
    }


# ------------------------------------------------------------------------ kindnesses


@pytest.mark.parametrize(
    ("tp", "default"),
    [
        pytest.param(int | None, None, id="int-or-None"),
        pytest.param(Optional[Color], None, id="Optional-enum"),  # noqa: UP045
        pytest.param(Annotated[int | None, "n"], None, id="annotated"),
    ],
)
def test_explicit_null_for_none_default(tp: Any, default: Any) -> None:
    tool = make_tool({"x": tp}, {"x": default})
    assert tool.validate({"x": None}) == {"x": None}
    assert tool.validate({}) == {}
    assert not schema_accepts(tool, {"x": None})  # kinder than the schema, as documented


def test_null_for_other_default_is_rejected() -> None:
    tool = make_tool({"x": int}, {"x": 5})
    assert detail_of(tool, {"x": None}) == field("x", "integer", None)


JSON_STRINGS = [
    pytest.param(Point, '{"x": 1}', Point(x=1), id="model"),
    pytest.param(Options, '{"verbose": false}', {"verbose": False}, id="TypedDict"),
    pytest.param(list[int], "[1, 2]", [1, 2], id="list"),
    pytest.param(dict[str, int], '{"a": 1}', {"a": 1}, id="dict"),
    pytest.param(list[int] | None, "[3]", [3], id="optional-list"),
    pytest.param(str, "[1, 2]", "[1, 2]", id="str-never-decoded"),
    pytest.param(int | str, '{"a": 1}', '{"a": 1}', id="scalar-union-never-decoded"),
]


@pytest.mark.parametrize(("tp", "sent", "received"), JSON_STRINGS)
def test_json_encoded_containers_are_decoded(tp: Any, sent: str, received: Any) -> None:
    tool = make_tool({"x": tp})
    assert tool.validate({"x": sent}) == {"x": received}


@pytest.mark.parametrize(
    ("tp", "sent", "expected"),
    [
        pytest.param(Point, "{not json", "object", id="not-json"),
        pytest.param(list[int], '"[1]"', "array", id="string-in-string"),
        pytest.param(list[int], "5", "array", id="number-in-string"),
    ],
)
def test_undecodable_json_strings_are_rejected(tp: Any, sent: str, expected: str) -> None:
    tool = make_tool({"x": tp})
    assert detail_of(tool, {"x": sent}) == field("x", expected, sent)


def test_nested_models_follow_their_own_extra() -> None:
    tool = make_tool({"loose": Loose, "closed": Closed}, {"closed": None, "loose": None})
    assert tool.validate({"loose": {"a": 1, "b": 2}}) == {"loose": Loose(a=1)}
    assert detail_of(tool, {"closed": {"a": 1, "b": 2}}) == field("closed.b", "no such field", 2)


def test_validation_does_not_touch_the_arguments() -> None:
    tool = make_tool({"x": list[int]})
    arguments = {"x": "[1]"}
    tool.validate(arguments)
    assert arguments == {"x": "[1]"}


# ------------------------------------------------------- property: pydantic == jsonschema

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


class Permission(enum.IntFlag):
    READ = 4
    WRITE = 2
    RUN = 1


class Side(enum.Flag):
    LEFT = 1
    RIGHT = 4  # a gap: 2 is no member, nor part of any combination


# Ten members, 1 to 512: past 8 bits a Flag publishes a range.
Wide = enum.IntFlag("Wide", ["B0", "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9"])


SIMPLE_TYPES = [
    int,
    float,
    str,
    bool,
    list[int],
    list[str],
    set[int],
    dict[str, int],
    int | str,
    Optional[bool],  # noqa: UP045
    Color,
    Level,
    Literal["a", 1],
    tuple[int, str],
    Annotated[int, Field(ge=0, lt=10)],
    Annotated[str, Field(min_length=1, max_length=3)],
    Point,
    Options,
    Permission,
    Side,
    Wide,
]
SIMPLE_TOOLS = [make_tool({"x": tp}) for tp in SIMPLE_TYPES]


@settings(database=None, max_examples=300, deadline=None)
@given(tool=st.sampled_from(SIMPLE_TOOLS), value=json_values)
def test_validation_equals_published_schema(tool: Tool, value: Any) -> None:
    try:
        tool.validate({"x": value})
    except InvalidArguments:
        accepted = False
    else:
        accepted = True
    assert accepted == schema_accepts(tool, {"x": value})


def test_integral_float_for_integer() -> None:
    tool = make_tool({"x": int})
    assert schema_accepts(tool, {"x": 1.0})
    assert tool.validate({"x": 1.0}) == {"x": 1}


def test_integral_float_inside_a_list_and_a_union() -> None:
    tool = make_tool({"xs": list[int], "u": int | str})
    assert tool.validate({"xs": [1.0, 2], "u": 3.0}) == {"xs": [1, 2], "u": 3}


def test_fractional_float_for_integer_is_still_rejected() -> None:
    tool = make_tool({"x": int})
    assert not schema_accepts(tool, {"x": 1.5})
    assert detail_of(tool, {"x": 1.5}) == {"field": "x", "expected": "integer", "received": 1.5}


def test_a_string_is_never_decoded_where_the_schema_accepts_a_string() -> None:
    """The JSON-string kindness is for object/array parameters only: a parameter that also
    takes a string receives the string as sent."""
    tool = make_tool({"value": str | dict[str, int], "items": str | list[str]})
    sent = {"value": '{"a": 1}', "items": '["not", "a list"]'}
    assert tool.validate(sent) == sent


# ------------------------------------------------------------------------------- Flags


def test_a_flag_publishes_every_combination_and_takes_exactly_those() -> None:
    tool = make_tool({"perm": Permission, "side": Side})
    assert tool.input_schema["properties"] == {
        "perm": {"type": "integer", "enum": [0, 1, 2, 3, 4, 5, 6, 7]},
        "side": {"type": "integer", "enum": [0, 1, 4, 5]},
    }
    assert tool.validate({"perm": 6, "side": 5}) == {
        "perm": Permission.READ | Permission.WRITE,
        "side": Side.LEFT | Side.RIGHT,
    }
    # pydantic alone takes any integer for an IntFlag (-1 even becomes READ|WRITE|RUN)
    for sent in (8, -1):
        assert detail_of(tool, {"perm": sent, "side": 0}) == {
            "field": "perm",
            "expected": [0, 1, 2, 3, 4, 5, 6, 7],
            "received": sent,
        }
    assert detail_of(tool, {"perm": 1, "side": 2}) == {
        "field": "side",
        "expected": [0, 1, 4, 5],
        "received": 2,
    }


def test_a_wide_flag_publishes_a_range_and_checks_it() -> None:
    tool = make_tool({"bits": Wide})
    assert tool.input_schema["properties"] == {
        "bits": {"type": "integer", "minimum": 0, "maximum": 1023}
    }
    assert tool.validate({"bits": 1023}) == {"bits": Wide(1023)}
    assert detail_of(tool, {"bits": 1024}) == {
        "field": "bits",
        "expected": "<= 1023",
        "received": 1024,
    }
    assert detail_of(tool, {"bits": -1}) == {"field": "bits", "expected": ">= 0", "received": -1}


def test_a_flag_inside_a_model_publishes_its_combinations() -> None:
    class Grant(BaseModel):
        perm: Permission

    tool = make_tool({"grant": Grant})
    assert tool.input_schema["properties"]["grant"]["properties"] == {
        "perm": {"type": "integer", "enum": [0, 1, 2, 3, 4, 5, 6, 7]}
    }
    assert detail_of(tool, {"grant": {"perm": 9}}) == {
        "field": "grant.perm",
        "expected": [0, 1, 2, 3, 4, 5, 6, 7],
        "received": 9,
    }


@pytest.mark.parametrize("sent", ["a", None, 1.5, True, 2])
def test_a_flag_refuses_what_no_combination_is_on_every_python(sent: Any) -> None:
    """Python 3.10's ``Flag`` raised ``TypeError`` for a non-integer, past pydantic."""
    tool = make_tool({"side": Side})
    assert detail_of(tool, {"side": sent}) == {
        "field": "side",
        "expected": [0, 1, 4, 5],
        "received": sent,
    }


def test_a_flag_with_a_negative_member_publishes_its_members() -> None:
    class Everything(enum.IntFlag):
        ONE = 1
        ALL = -1

    tool = make_tool({"x": Everything})
    assert tool.input_schema["properties"]["x"] == {"type": "integer", "enum": [-1, 1]}
    assert tool.validate({"x": -1}) == {"x": Everything.ALL}


@pytest.mark.parametrize(
    "tp",
    [
        Literal[1, 2] | float,
        Annotated[int, Field(le=10)] | float,
        Literal[-1, 0] | Annotated[float, Field(ge=0)],
    ],
    ids=["enum-or-number", "bounded-int-or-number", "enum-or-bounded-number"],
)
def test_an_integer_the_number_branch_takes_is_not_held_to_the_integer_branch(tp: Any) -> None:
    tool = make_tool({"x": tp})
    assert schema_accepts(tool, {"x": 50})
    assert tool.validate({"x": 50}) == {"x": 50.0}


def test_an_enum_s_own_missing_hook_still_decides() -> None:
    class Mode(str, enum.Enum):
        fast = "fast"
        slow = "slow"

        @classmethod
        def _missing_(cls, value: object) -> Mode | None:
            return cls(value.lower()) if isinstance(value, str) else None

    tool = make_tool({"m": Mode})
    assert tool.validate({"m": "FAST"}) == {"m": Mode.fast}
