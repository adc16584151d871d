"""An App whose one tool takes every shape the dev page builds a form for (its browser tests)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mcpkit import App

app = App("shapes", version="1.0.0")


class Point(BaseModel):
    x: int
    y: int


@app.tool
def echo(
    count: Annotated[int, Field(ge=1, le=10)],
    flag: bool,
    tags: list[str],
    point: Point,
    ratio: float = 0.5,
    mode: Literal["fast", "slow"] | None = None,
) -> dict[str, Any]:
    """Returns its arguments as it received them."""
    return {
        "count": count,
        "flag": flag,
        "tags": tags,
        "point": point.model_dump(),
        "ratio": ratio,
        "mode": mode,
    }


class Node(BaseModel):
    name: str
    parent: Node | None = None


@app.tool
def walk(node: Node) -> str:
    """Names the node and its parents, up to the root (a recursive schema)."""
    names = []
    current: Node | None = node
    while current is not None:
        names.append(current.name)
        current = current.parent
    return "/".join(names)
