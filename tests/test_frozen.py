"""``@frozen``: the value classes behave like frozen dataclasses, built without compiling."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import subprocess
import sys
import threading
from typing import Any, ClassVar

import pytest
from stdio_support import unmeasured_env

from mcpkit import App, Image, Text, ToolResult
from mcpkit._frozen import frozen, replace
from mcpkit.context import ElicitResult
from mcpkit.testing import Client


@frozen
class Point:
    x: int
    y: int = 0
    label: str | None = None

    def __post_init__(self) -> None:
        if self.x < 0:
            raise ValueError("x must not be negative")


@frozen
class Named(Point):
    name: str = "origin"


@dataclasses.dataclass(frozen=True)
class DataPoint:
    x: int
    y: int = 0
    label: str | None = None


def test_arguments_by_position_or_keyword_with_defaults() -> None:
    assert (Point(1).x, Point(1).y, Point(1).label) == (1, 0, None)
    assert Point(1, 2, "a") == Point(x=1, label="a", y=2)
    assert Point(3, label="b").label == "b"


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "Point() missing required argument: 'x'"),
        ((1, 2, "a", 4), {}, "Point() takes 3 positional arguments but 4 were given"),
        ((1,), {"x": 2}, "Point() got multiple values for argument 'x'"),
        ((1,), {"z": 2}, "Point() got an unexpected keyword argument 'z'"),
    ],
)
def test_wrong_arguments_raise_type_error(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError) as caught:
        Point(*args, **kwargs)
    assert str(caught.value) == message


def test_post_init_runs_after_the_fields_are_set() -> None:
    with pytest.raises(ValueError, match="x must not be negative"):
        Point(-1)


def test_repr_eq_and_hash_match_a_frozen_dataclass() -> None:
    assert repr(Point(1, 2)) == "Point(x=1, y=2, label=None)"
    assert repr(Point(1, 2)) == repr(DataPoint(1, 2)).replace("DataPoint", "Point")
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(1, 3)
    other: object = DataPoint(1)
    assert Point(1) != other  # another class never compares equal
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert len({Point(1), Point(1), Point(2)}) == 2


def test_fields_are_frozen() -> None:
    point = Point(1)
    with pytest.raises(AttributeError, match="cannot assign to field 'x': Point is frozen"):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot assign to field 'y': Point is frozen"):
        del point.y
    assert point.x == 1


def test_a_subclass_appends_its_fields_and_keeps_the_bases_defaults() -> None:
    named = Named(1, name="here")
    assert repr(named) == "Named(x=1, y=0, label=None, name='here')"
    assert Named(1) != Point(1)
    with pytest.raises(ValueError, match="x must not be negative"):
        Named(-1)


def test_signature_and_match_args_list_the_fields() -> None:
    assert str(inspect.signature(Point)) == "(x, y=0, label=None)"
    assert Point.__match_args__ == ("x", "y", "label")
    match Point(4, 5):
        case Point(x, y):
            assert (x, y) == (4, 5)
        case _:  # pragma: no cover - the case above matches
            pytest.fail("Point did not match its own pattern")


def test_a_required_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="field 'b' without a default follows one with"):

        @frozen
        class Wrong:
            a: int = 0
            b: int  # type: ignore[misc]


def test_the_public_value_classes_are_frozen() -> None:
    assert Text("hi") == Text("hi")
    assert repr(ToolResult(structured={"a": 1})) == (
        "ToolResult(content=None, structured={'a': 1}, is_error=False, meta=None)"
    )
    assert str(inspect.signature(Image)) == (
        "(data=None, path=None, mime_type=None, annotations=None, meta=None)"
    )
    with pytest.raises(ValueError, match="Image takes exactly one of data= or path="):
        Image()
    with pytest.raises(AttributeError):
        Text("a").text = "b"  # type: ignore[misc]


def test_frozen_classes_are_dataclasses_to_the_standard_library() -> None:
    kind: type = Text
    assert dataclasses.is_dataclass(kind)
    assert [f.name for f in dataclasses.fields(Text)] == ["text", "annotations", "meta"]
    changed = dataclasses.replace(Text("a", meta={"k": 1}), text="b")
    assert changed == Text("b", meta={"k": 1})
    assert dataclasses.asdict(ToolResult(structured={"a": 1})) == {
        "content": None,
        "structured": {"a": 1},
        "is_error": False,
        "meta": None,
    }


def test_pydantic_validates_serializes_and_describes_frozen_classes() -> None:
    from pydantic import TypeAdapter
    from pydantic_core import to_json

    adapter = TypeAdapter(ElicitResult)
    answer = adapter.validate_python({"action": "accept", "content": {"name": "x"}})
    assert answer == ElicitResult("accept", {"name": "x"})
    assert adapter.dump_python(answer, mode="json") == {
        "action": "accept",
        "content": {"name": "x"},
    }
    assert adapter.json_schema()["required"] == ["action"]
    assert to_json({"block": Text("a")}) == (
        b'{"block":{"text":"a","annotations":null,"meta":null}}'
    )


def test_a_tool_may_return_frozen_values_inside_its_data() -> None:

    from mcpkit.context import ElicitResult

    app = App("records", "1")

    @app.tool
    def block() -> dict[str, Any]:
        return {"block": Text("a")}

    @app.tool
    def answer() -> ElicitResult:
        return ElicitResult("decline")

    with Client(app) as client:
        assert client.call_tool("block", {})["structuredContent"] == {
            "block": {"text": "a", "annotations": None, "meta": None}
        }
        assert client.call_tool("answer", {})["structuredContent"] == {
            "action": "decline",
            "content": None,
        }


FROZEN_WITHOUT_DATACLASSES = """
import sys
import mcpkit.cli.serve, mcpkit.protocol.server, mcpkit.transports.stdio
from mcpkit import Text, ToolResult
from mcpkit._frozen import frozen, replace

@frozen
class Late:
    a: int
    b: str = "x"

value = replace(Late(1), b="y")
print(value, Text("a") == Text("a"), ToolResult().is_error, "dataclasses" in sys.modules)
"""


def test_frozen_classes_are_made_and_used_without_importing_dataclasses() -> None:
    """A stdio server's start-up: its value classes, made and used, never load ``dataclasses``
    (~4% of a 4-tool server's spawn -> ``tools/list``); the first look of the standard library
    or pydantic at one makes it a dataclass then."""
    out = subprocess.run(
        [sys.executable, "-c", FROZEN_WITHOUT_DATACLASSES],
        capture_output=True,
        text=True,
        check=True,
        env=unmeasured_env(),  # coverage's own start-up in the child imports dataclasses
    ).stdout
    assert out == "Late(a=1, b='y') True False False\n"


FROZEN_MODULES = [
    "mcpkit._docstrings",
    "mcpkit._param_headers",
    "mcpkit._signatures",
    "mcpkit._availability",
    "mcpkit.docgen.changes",
    "mcpkit.docgen.fields",
    "mcpkit.docgen.lint",
    "mcpkit.docgen.model",
    "mcpkit.docgen.providers",
    "mcpkit.content",
    "mcpkit.context",
    "mcpkit.middleware",
    "mcpkit.options",
    "mcpkit.prompts",
    "mcpkit.protocol.jsonrpc",
    "mcpkit.protocol.methods.spec",
    "mcpkit.resources",
    "mcpkit.results",
    "mcpkit.schema",
    "mcpkit.settings",
    "mcpkit.tools",
    "mcpkit.transports.http.auth",
]


def frozen_classes() -> list[type]:
    found = []
    for name in FROZEN_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and "__frozen_fields__" in vars(value):
                found.append(value)
    return found


class _Slots:
    __slots__ = ("x", "y")


@frozen
class Slotted(_Slots):
    """Fields that are slots of a base class: data descriptors, set through them."""

    x: int
    y: int


def test_fields_stored_in_slots_go_through_the_slots() -> None:
    value = Slotted(1, 2)
    assert (value.x, value.y) == (1, 2)
    assert vars(value) == {}  # in the slots, not in the instance dict
    assert vars(Point(1, 2, "p")) == {"x": 1, "y": 2, "label": "p"}
    assert Slotted(1, 2) == Slotted(1, 2)
    with pytest.raises(AttributeError, match="frozen"):
        value.x = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "cls", [*frozen_classes(), Point, Named, Slotted], ids=lambda c: c.__name__
)
def test_every_frozen_class_has_the_fields_dataclasses_finds(cls: type) -> None:
    fields = dataclasses.fields(cls)
    assert tuple(f.name for f in fields) == cls.__frozen_fields__  # type: ignore[attr-defined]
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    assert defaults == cls.__frozen_defaults__  # type: ignore[attr-defined]
    assert tuple(inspect.signature(cls).parameters) == cls.__frozen_fields__  # type: ignore[attr-defined]


@frozen
class Counted:
    """A ``ClassVar`` is no field, as for a dataclass."""

    limit: ClassVar[int] = 3
    n: int = 0


class Plain(Point):
    """A subclass that is not frozen itself: its base's fields."""


def test_class_vars_are_no_fields_and_a_plain_subclass_has_its_bases_fields() -> None:
    assert Counted.__frozen_fields__ == ("n",)  # type: ignore[attr-defined]
    assert [f.name for f in dataclasses.fields(Counted)] == ["n"]
    assert repr(Counted(2)) == "Counted(n=2)"
    assert [f.name for f in dataclasses.fields(Plain)] == ["x", "y", "label"]
    assert dataclasses.is_dataclass(Plain(1))


def test_a_mutable_default_is_refused_when_the_class_is_made() -> None:
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field tags"):

        @frozen
        class Tagged:
            tags: list[str] = []  # noqa: RUF012


def test_replace_makes_a_changed_copy_through_the_initializer() -> None:
    assert replace(Point(1, 2), label="p") == Point(1, 2, "p")
    assert replace(Named(1), name="n", y=5) == Named(1, 5, None, "n")
    with pytest.raises(ValueError, match="x must not be negative"):
        replace(Point(1), x=-1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        replace(Point(1), z=2)


def test_threads_that_look_at_a_fresh_class_at_once_see_the_same_fields() -> None:
    @frozen
    class Fresh(Named):
        extra: int = 0

    seen: list[tuple[str, ...]] = []
    start = threading.Barrier(8)

    def look() -> None:
        start.wait()
        seen.append(tuple(f.name for f in dataclasses.fields(Fresh)))

    threads = [threading.Thread(target=look) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [("x", "y", "label", "name", "extra")] * 8
