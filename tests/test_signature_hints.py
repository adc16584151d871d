"""Compiling a signature: ``resolve_hints`` gives what ``typing.get_type_hints`` gives, also when
the annotation objects were seen before (a server's tools share a few: ``int``, an Enum,
``Optional[int]``) and it skips the evaluation; ``is_context`` finds the ``Context`` however it
is written, also among hints it has seen before."""

from __future__ import annotations

import collections.abc
import enum
import functools
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional

from hypothesis import given
from hypothesis import strategies as st

from mcpkit import Context
from mcpkit._signatures import is_context, resolve_hints


class Color(str, enum.Enum):
    red = "red"
    blue = "blue"


class Later:
    pass


ANNOTATIONS: list[Any] = [
    int,
    str,
    Color,
    Optional[int],  # noqa: UP045 - typing caches it: the same object every time
    int | None,
    Literal["a", "b"],
    list[int],
    dict[str, int],
    Annotated[int, "doc"],
    None,
    "int",
    "Later",
    list["Later"],
    Optional["Later"],
]


def made(annotations: dict[str, Any]) -> Callable[..., Any]:
    def fn(**kwargs: Any) -> None:
        return None

    fn.__annotations__ = dict(annotations)
    return fn


@given(st.lists(st.sampled_from(ANNOTATIONS), max_size=5), st.booleans())
def test_resolved_hints_are_get_type_hints_own(chosen: list[Any], wrap: bool) -> None:
    returns = chosen[0] if chosen else None
    fn = made({f"p{i}": tp for i, tp in enumerate(chosen)} | {"return": returns})
    if wrap:
        fn = functools.wraps(fn)(lambda **kwargs: fn(**kwargs))
    expected = typing.get_type_hints(fn, include_extras=True)
    assert resolve_hints(fn, "tool 't'") == expected
    assert resolve_hints(fn, "tool 't'") == expected  # the second time from what it remembered
    assert list(resolve_hints(fn, "tool 't'")) == list(expected)


FRESH: list[Callable[[], Any]] = [
    lambda: list[int],
    lambda: dict[str, list[int]],
    lambda: dict[str, Color],
    lambda: list[Optional[int]],  # noqa: UP045
    lambda: tuple[int, ...],
    lambda: tuple[()],
    lambda: dict[str, "Later"],
    lambda: list[list["Later"]],
    lambda: collections.abc.Callable[[int], str],
    lambda: type[int],
]


@given(st.lists(st.sampled_from(FRESH), min_size=1, max_size=4))
def test_new_generic_aliases_resolve_as_get_type_hints(makers: list[Callable[[], Any]]) -> None:
    """Each ``def`` makes new ``list[...]``/``dict[...]`` objects: seen by their arguments, they
    still resolve to what ``get_type_hints`` gives."""
    for _ in range(2):
        fn = made({f"p{i}": make() for i, make in enumerate(makers)} | {"return": makers[0]()})
        expected = typing.get_type_hints(fn, include_extras=True)
        assert resolve_hints(fn, "tool 't'") == expected


def test_a_string_annotation_is_always_evaluated_again() -> None:
    fn = made({"x": "Later"})
    assert resolve_hints(fn, "tool 't'") == {"x": Later}
    assert resolve_hints(made({"x": "Color"}), "tool 't'") == {"x": Color}


def test_the_context_is_found_however_written_also_after_other_hints() -> None:
    for hint in ANNOTATIONS:
        assert not is_context(hint)
        assert not is_context(hint)
    for hint in (Context, Context | None, Optional[Context], Annotated[Context, "c"]):  # noqa: UP045
        assert is_context(hint)
        assert is_context(hint)
    assert not is_context(None)
