"""Registration reads a plain function's parameters from its code object, and anything else
through ``inspect.signature``: both give the same parameters (names, defaults), the same
refusals (word for word) and the same published schemas, whichever way a function is written
(positional-only, keyword-only, ``*args``/``**kwargs``, defaults, string annotations,
``functools.partial``, callable objects, methods, decorated functions)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from mcpkit import App, Context, DefinitionError
from mcpkit._signatures import check_signature
from mcpkit.tools import Tool

MARKER = object()  # a default compared by identity


def plain(a: int, b: str = "x") -> None: ...


def keyword_only(a: int, *, b: int, c: str = "c", d: object = MARKER) -> None: ...


def all_defaults(a: int = 1, b: list[int] | None = None) -> None: ...


def with_context(ctx: Context, a: int, *, b: int = 2) -> None: ...


def no_parameters() -> None: ...


def unannotated_kw(a: int, *, b) -> None: ...  # type: ignore[no-untyped-def]


def mixed(a: int, /, b: int, *args: int, c: int, **kwargs: int) -> None: ...


def decorated(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


def with_attribute(a: int, b: str = "x") -> None: ...


with_attribute.note = "set"  # type: ignore[attr-defined]


class Adder:
    def __call__(self, a: int, b: str = "x") -> None: ...

    def method(self, a: int, b: str = "x") -> None: ...


def two(a: int, b: int, c: str = "x") -> None: ...


async def coroutine(a: int, *, b: str = "x") -> None: ...


def defaults_by_hand(a: int, b: int) -> None: ...


defaults_by_hand.__defaults__ = (5,)


def too_many_defaults(a: int) -> None: ...


too_many_defaults.__defaults__ = (1, 2)


def keyword_defaults_by_hand(a: int, *, b: int) -> None: ...


keyword_defaults_by_hand.__kwdefaults__ = {"b": 3, "unknown": 4}


ACCEPTED: list[Callable[..., Any]] = [
    plain,
    keyword_only,
    all_defaults,
    with_context,
    no_parameters,
    decorated(plain),
    decorated(keyword_only),
    with_attribute,
    Adder(),
    Adder().method,
    functools.partial(two, 1),
    functools.partial(two, c="y"),
    coroutine,
    defaults_by_hand,
    too_many_defaults,
    keyword_defaults_by_hand,
    lambda a, b=2: None,  # accepted only with an explicit schema (below)
]


def inspected(fn: Callable[..., Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((p.name, p.default) for p in inspect.signature(fn).parameters.values())


@pytest.mark.parametrize("fn", ACCEPTED[:-1])
def test_the_parameters_are_those_inspect_reads(fn: Callable[..., Any]) -> None:
    declared = check_signature(fn, "tool 't'")
    assert declared == inspected(fn)
    for (_, default), (_, expected) in zip(declared, inspected(fn), strict=True):
        assert default is expected


@pytest.mark.parametrize("fn", [*ACCEPTED, mixed, unannotated_kw])
def test_with_an_explicit_schema_too(fn: Callable[..., Any]) -> None:
    if fn is mixed:  # positional-only and *args stay refused
        with pytest.raises(DefinitionError, match="positional-only"):
            check_signature(fn, "tool 't'", explicit=True)
        return
    assert check_signature(fn, "tool 't'", explicit=True) == inspected(fn)


def positional_only(a: int, /, b: int) -> None: ...


def star_args(a: int, *rest: int) -> None: ...


def star_kwargs(a: int, **rest: int) -> None: ...


def private(a: int, _b: int) -> None: ...


def private_kw(a: int, *, _b: int) -> None: ...


def unannotated(a: int, b) -> None: ...  # type: ignore[no-untyped-def]


def private_unannotated(_a) -> None: ...  # type: ignore[no-untyped-def]


REFUSED = [
    (positional_only, "tool 't': parameter 'a' is positional-only; clients send arguments by "
     "name, so remove the '/'"),
    (star_args, "tool 't': *rest cannot be sent by a client; list each argument"),
    (star_kwargs, "tool 't': **rest cannot be described by a schema; list each argument or "
     "take one model/TypedDict parameter"),
    (private, "tool 't': parameter '_b' starts with '_'; rename it (a client cannot see "
     "private parameters)"),
    (private_kw, "tool 't': parameter '_b' starts with '_'; rename it (a client cannot see "
     "private parameters)"),
    (unannotated, "tool 't': parameter 'b' has no type annotation; add one (e.g. 'b: str') so "
     "mcpkit can publish its schema"),
    (unannotated_kw, "tool 't': parameter 'b' has no type annotation; add one (e.g. 'b: str') "
     "so mcpkit can publish its schema"),
    (private_unannotated, "tool 't': parameter '_a' starts with '_'; rename it (a client "
     "cannot see private parameters)"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "message"), REFUSED)
def test_refusals_are_the_same_on_both_paths(fn: Callable[..., Any], message: str) -> None:
    """The plain function (read from its code) and the same function behind a decorator (read
    by ``inspect``) are refused with the same words."""
    for shape in (fn, decorated(fn)):
        with pytest.raises(DefinitionError) as caught:
            check_signature(shape, "tool 't'")
        assert str(caught.value) == message


def test_an_explicit_schema_takes_unannotated_parameters_unchecked() -> None:
    """With an explicit schema an unannotated parameter is not checked at all (its name
    included), on both paths; an annotated one still is."""
    for shape in (private_unannotated, decorated(private_unannotated)):
        assert check_signature(shape, "tool 't'", explicit=True) == (
            ("_a", inspect.Parameter.empty),
        )
    for shape in (private, decorated(private)):
        with pytest.raises(DefinitionError, match="starts with '_'"):
            check_signature(shape, "tool 't'", explicit=True)


def test_the_signature_is_inspects_built_on_first_read() -> None:
    tool = Tool(keyword_only)
    assert "signature" not in vars(tool)
    assert tool.signature == inspect.signature(keyword_only)
    assert tool.signature is tool.signature


def test_every_shape_publishes_the_same_schema() -> None:
    """A plain function, the same behind a decorator, a method and a function with
    attributes all publish the same definition (and compile the same defaults)."""
    app = App("shapes", "1")
    app.add_tool(plain, name="plain")
    app.add_tool(decorated(plain), name="decorated")
    app.add_tool(Adder().method, name="method")
    app.add_tool(with_attribute, name="attribute")
    app.compile()
    schemas = {name: tool.input_schema for name, tool in app.tools.items()}
    assert schemas["plain"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string", "default": "x"}},
        "required": ["a"],
    }
    assert all(schema == schemas["plain"] for schema in schemas.values())
    assert app.tools["plain"].validate({"a": 1}) == app.tools["method"].validate({"a": 1})


def test_keyword_only_defaults_and_the_context_compile_as_before() -> None:
    app = App("kw", "1")
    app.add_tool(with_context)
    app.add_tool(keyword_only)
    app.compile()
    assert app.tools["with_context"].input_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
        "required": ["a"],
    }
    assert app.tools["keyword_only"].input_schema["required"] == ["a", "b"]
    assert app.tools["keyword_only"].input_schema["properties"]["c"] == {
        "type": "string",
        "default": "c",
    }
    assert app.tools["keyword_only"].validate({"a": 1, "b": 2}) == {"a": 1, "b": 2}
