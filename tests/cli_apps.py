"""Apps the CLI tests load by TARGET (``tests/cli_apps.py:<name>``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mcpkit import App, ToolAnnotations, ToolError


class Opaque:
    """A type pydantic cannot describe: the tool using it fails to compile."""


class Window(BaseModel):
    width: Annotated[int, Field(ge=1, le=4096, description="Pixels across.")]
    tags: list[Literal["a", "b"]] = []


documented = App(
    "documented <&> app",
    version="2.0.0",
    instructions="Use <b>carefully</b> & read the docs.",
)


@documented.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def resize(
    window: Window,
    mode: Literal["fit", "fill"] = "fit",
    scale: Annotated[float, Field(gt=0, description="A factor > 0.")] = 1.0,
    note: str | None = None,
) -> dict[str, int]:
    """Resize a <window> | pipes & "quotes".

    Args:
        window: The window to resize.
        mode: How to fit it.
        scale: A factor.
        note: Free text.
    """
    return {"width": int(window.width * scale)}


@documented.tool
def add(a: int, b: int = 2) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@documented.tool
def fail(message: str) -> str:
    """Always fail with ``message``.

    Args:
        message: What to say.
    """
    raise ToolError(message)


@documented.tool
def echo(items: list[int], options: dict[str, Any] | None = None, flag: bool = False) -> str:
    """Echo the arguments as text.

    Args:
        items: Numbers.
        options: Anything.
        flag: A switch.
    """
    return f"{items} {options} {flag}"


flawed = App("flawed", version="0.1.0")


@flawed.tool
def undocumented(x: int) -> int:
    return x


@flawed.tool(name="a" * 70, description="A long name.")
def long_name(y: str) -> str:
    """(replaced by the description)"""
    return y


@flawed.tool(description="Takes an opaque value.")
def broken(value: Opaque) -> None:
    """Never compiles."""


warned = App("warned", version="0.1.0")


@warned.tool
def loose(value: int | str, blob: dict[str, Any]) -> None:
    """Take a union and an open-ended object (both documented).

    Args:
        value: An int or a string.
        blob: Anything.
    """


empty = App("empty", version="0.0.1")
