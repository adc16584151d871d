"""The tools every benchmarked server exposes, as plain typed functions (no SDK imported).

``tool_functions(count)``: for ``count <= 4`` the small set (``add``, ``add_async``, ``describe``
with an Enum, a Literal, an optional value and a nested TypedDict, ``stats`` returning a dict);
otherwise ``count`` generated tools with a mix of int/str/Enum/Optional/Literal parameters.
Each server (mcpkit, the floor, the peers) registers these same functions.

The nested structure is a TypedDict, not a pydantic model, so that importing this module
imports no SDK and no pydantic: every server then pays for pydantic only if it needs it, which
is what the start-up comparison with the stdlib floor (``floor_stdlib.py``) measures. Every
server validates a TypedDict as strictly as it did the model (the same fields, required keys).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, Optional

from typing_extensions import NotRequired, TypedDict

__all__ = ["SMALL", "tool_count", "tool_functions"]


class Color(str, Enum):
    red = "red"
    green = "green"
    blue = "blue"


class Size(str, Enum):
    small = "small"
    medium = "medium"
    large = "large"


class Point(TypedDict):
    x: int
    y: int


class Shape(TypedDict):
    name: str
    origin: Point
    tags: NotRequired[list[str]]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers (async)."""
    return a + b


def describe(
    shape: Shape,
    color: Color,
    mode: Literal["fast", "exact"] = "fast",
    scale: float | None = None,
) -> str:
    """Describe a shape."""
    origin = shape["origin"]
    return f"{color.value} {shape['name']} at {origin['x']},{origin['y']} ({mode}, {scale})"


def stats(values: list[float]) -> dict[str, float]:
    """Summary statistics of some values."""
    total = sum(values)
    return {"count": float(len(values)), "sum": total, "mean": total / len(values) if values else 0}


SMALL: list[Callable[..., Any]] = [add, add_async, describe, stats]

# Parameter shapes the generated tools draw from (annotation, default or None for required).
_PARAMS: list[tuple[str, str | None]] = [
    ("int", None),
    ("str", None),
    ("Color", None),
    ("Optional[int]", "None"),
    ('Literal["a", "b", "c"]', '"a"'),
    ("Size", "Size.medium"),
    ("float", None),
    ("Optional[str]", "None"),
    ("bool", "False"),
]
_RETURNS = [("int", "0"), ("str", '""'), ("dict[str, int]", "{}")]


def _source(index: int) -> str:
    shapes = [_PARAMS[(index + k * 2) % len(_PARAMS)] for k in range(2 + index % 4)]
    shapes.sort(key=lambda shape: shape[1] is not None)  # required parameters first
    params = ", ".join(
        f"p{k}: {annotation}" + (f" = {default}" if default else "")
        for k, (annotation, default) in enumerate(shapes)
    )
    returns, value = _RETURNS[index % len(_RETURNS)]
    return (
        f"def tool_{index:04d}({params}) -> {returns}:\n"
        f'    """Generated tool number {index}."""\n'
        f"    return {value}\n"
    )


def generated(count: int) -> list[Callable[..., Any]]:
    """``count`` freshly generated typed functions (new function objects on every call)."""
    namespace: dict[str, Any] = {
        "Color": Color,
        "Size": Size,
        "Literal": Literal,
        "Optional": Optional,
    }
    # dont_inherit: the generated annotations are real objects, not this module's strings.
    code = compile(
        "\n".join(_source(i) for i in range(count)), "<tools>", "exec", dont_inherit=True
    )
    exec(code, namespace)
    return [namespace[f"tool_{i:04d}"] for i in range(count)]


def tool_functions(count: int) -> list[Callable[..., Any]]:
    return list(SMALL) if count <= len(SMALL) else generated(count)


def tool_count() -> int:
    """The number of tools the server should expose: ``BENCH_TOOLS`` (default 3)."""
    return int(os.environ.get("BENCH_TOOLS", "3"))
