"""The schema fast path gives exactly pydantic's post-processed output, for every type it takes.

``fast_schema`` publishes common simple types without pydantic (so compiling 1,000 tools and
answering ``tools/list`` stays cheap); these properties hold it to the slow path's result.
"""

from __future__ import annotations

import copy
import enum
import marshal
from typing import Annotated, Any, Literal, Optional

import typing_extensions
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from mcpkit._fast_schema import _marshalled
from mcpkit._pydantic import NoTitles
from mcpkit.schema import (
    EMPTY,
    Header,
    Param,
    _arguments_adapter,
    _finish_properties,
    _jsonable,
    arguments_schema,
    clean_schema,
    fast_schema,
)


class Color(str, enum.Enum):
    red = "red"
    blue = "blue"


class Level(enum.IntEnum):
    low = 1
    high = 2


class Documented(enum.Enum):
    """Pick one.

    Indented second paragraph.
    """

    a = "a"
    b = "b"


class Access(enum.IntFlag):
    read = 1
    write = 2


class Corner(enum.Flag):
    """Where."""

    top = 1
    left = 8


LEAVES: list[Any] = [
    str,
    int,
    float,
    bool,
    Color,
    Level,
    Documented,
    Access,
    Corner,
    Literal["x", "y"],
    Literal[1, 2, 3],
    Literal[True, False],
]


def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        inner.map(lambda t: Optional[t]),  # noqa: UP045 - the typing form is under test
        inner.map(lambda t: t | None),
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        inner.map(lambda t: Annotated[t, "a description"]),
    )


def with_header(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(extend(inner), inner.map(lambda t: Annotated[t, Header("X-Test")]))


# Header(...) only in nested positions for parameter lists: on a parameter it is checked
# (type, uniqueness) and may rightly refuse, which test_schema_headers covers.
PARAM_TYPES = st.recursive(st.sampled_from(LEAVES), extend, max_leaves=4)
TYPES = st.recursive(st.sampled_from(LEAVES), with_header, max_leaves=4)


@st.composite
def typeddicts(draw: st.DrawFn, field_types: st.SearchStrategy[Any] = PARAM_TYPES) -> Any:
    """TypedDicts (total or not, some keys qualified, names that may collide) of ``field_types``."""
    fields: dict[str, Any] = {}
    for index in range(draw(st.integers(min_value=0, max_value=3))):
        tp = draw(field_types)
        qualifier = draw(
            st.sampled_from([None, typing_extensions.Required, typing_extensions.NotRequired])
        )
        fields[f"f{index}"] = tp if qualifier is None else qualifier[tp]
    name = draw(st.sampled_from(["Shape", "Point", "Box"]))
    return typing_extensions.TypedDict(name, fields, total=draw(st.booleans()))  # type: ignore[operator]


def list_of(tp: Any) -> Any:
    return list[tp]


LEAF_TYPEDDICTS = typeddicts()
NESTED_TYPEDDICTS = typeddicts(
    st.one_of(PARAM_TYPES, LEAF_TYPEDDICTS, LEAF_TYPEDDICTS.map(list_of))
)


def slow(tp: Any, mode: Any) -> dict[str, Any]:
    raw = TypeAdapter(tp).json_schema(mode=mode, schema_generator=NoTitles)
    return clean_schema(raw)


@given(TYPES)
def test_fast_schema_equals_pydantic_in_both_modes(tp: Any) -> None:
    fast = fast_schema(tp)
    assume(fast is not None)  # nested Optionals are left to pydantic
    assert fast == slow(tp, "validation")
    assert fast == slow(tp, "serialization")


@given(NESTED_TYPEDDICTS)
def test_fast_typeddict_equals_pydantic_in_both_modes(tp: Any) -> None:
    fast = fast_schema(tp)
    assume(fast is not None)  # a field pydantic publishes differently (Annotated, nested None)
    assert fast == slow(tp, "validation")
    assert fast == slow(tp, "serialization")


class Plain(typing_extensions.TypedDict):
    code: int
    note: typing_extensions.NotRequired[str | None]


class Said(typing_extensions.TypedDict):
    """A docstring pydantic publishes as the description."""

    code: int


class Outer(typing_extensions.TypedDict):
    inner: Plain


class Tree(typing_extensions.TypedDict):
    children: list[Tree]


def test_a_plain_typeddict_takes_the_fast_path_and_the_rest_go_to_pydantic() -> None:
    assert fast_schema(Plain) == {
        "type": "object",
        "properties": {
            "code": {"type": "integer"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["code"],
    }
    assert fast_schema(Outer) == {
        "type": "object",
        "properties": {"inner": fast_schema(Plain)},
        "required": ["inner"],
    }
    assert fast_schema(Said) is None
    assert fast_schema(Tree) is None  # recursive: pydantic keeps it in $defs


DEFAULTS = {str: "s", int: 3, float: 1.5, bool: True, Color: Color.blue, Level: Level.low}


@st.composite
def parameter_lists(draw: st.DrawFn) -> list[Param]:
    params = []
    for index in range(draw(st.integers(min_value=0, max_value=4))):
        tp = draw(st.one_of(PARAM_TYPES, NESTED_TYPEDDICTS, NESTED_TYPEDDICTS.map(list_of)))
        default = draw(st.sampled_from([EMPTY, None, *([DEFAULTS[tp]] if tp in DEFAULTS else [])]))
        params.append(Param(f"p{index}", tp, default, draw(st.sampled_from([None, "doc"]))))
    return params


@given(parameter_lists())
def test_fast_arguments_equal_the_pydantic_path(params: list[Param]) -> None:
    published = arguments_schema(params, where="tool 't'").schema
    raw = _arguments_adapter(params, "tool 't'").json_schema(schema_generator=NoTitles)
    expected = clean_schema(raw, strip_optional=True)
    _finish_properties(expected, params, "tool 't'")
    assert published == expected


def scribble(schema: Any) -> None:
    """Change every dict and list inside ``schema``, as a careless caller might."""
    if isinstance(schema, dict):
        for value in list(schema.values()):
            scribble(value)
        schema["scribbled"] = True
    elif isinstance(schema, list):
        for value in list(schema):
            scribble(value)
        schema.append("scribbled")


@given(parameter_lists())
def test_a_remembered_parameter_schema_is_the_same_and_a_copy(params: list[Param]) -> None:
    """The same annotation objects again (as in a server's many tools): the remembered schemas
    equal the first ones, and changing the first ones changes none that come later."""
    first = arguments_schema(params, where="tool 't'").schema
    expected = copy.deepcopy(first)
    scribble(first)
    assert arguments_schema(params, where="tool 'u'").schema == expected


def test_types_outside_the_fast_path_go_to_pydantic() -> None:
    for tp in (Literal["only"], set[int], tuple[int, str], dict[int, str], Annotated[int, 5]):
        assert fast_schema(tp) is None, tp


def test_the_common_forms_take_the_fast_path() -> None:
    for leaf in LEAVES:
        for tp in (leaf, Optional[leaf], list[leaf], dict[str, leaf], Annotated[leaf, "d"]):  # type: ignore[valid-type]  # noqa: UP045
            assert fast_schema(tp) is not None, tp


@given(st.one_of(st.text(), st.integers(), st.booleans(), st.just(10**5000)))
def test_a_plain_default_is_published_as_the_serializer_gives_it(value: Any) -> None:
    """``str``, ``int`` and ``bool`` defaults skip ``to_jsonable_python``: it gives them back."""
    published = _jsonable(value)
    assert published == to_jsonable_python(value)
    assert type(published) is type(to_jsonable_python(value))


class Pick(str, enum.Enum):
    one = "one"
    two = "two"


def test_a_remembered_schema_comes_back_as_separate_copies() -> None:
    """A list reached twice comes back as two lists (as the first schema had them, separate
    for callers to change); a schema holding anything but plain JSON values is not marshalled
    (it is copied dict by dict instead)."""
    shared = ["a", "b"]
    schema = {"anyOf": [{"enum": shared}, {"enum": shared}], "n": 1.5, "ok": None, "b": True}
    data = _marshalled(schema)
    assert data is not None
    again = marshal.loads(data)
    assert again == schema
    again["anyOf"][0]["enum"].append("c")
    assert again["anyOf"][1]["enum"] == ["a", "b"]
    assert _marshalled({"enum": [Pick.one]}) is None
