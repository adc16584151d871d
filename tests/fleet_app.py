"""The app the fleet tests serve as two ``mcpkit run --transport http --store redis://...``
processes: tasks that ask, that wait until cancelled (leaving a mark in ``FLEET_MARKS``), and
a tool that publishes a resource update."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import BaseModel

from mcpkit import App, Context

app = App("fleet", "1")
MARKS = Path(os.environ.get("FLEET_MARKS", "."))


class Name(BaseModel):
    name: str


@app.tool(task="required")
async def greet(ctx: Context) -> str:
    """Asks the user's name, then greets."""
    answer = await ctx.elicit("Your name?", Name)
    return f"Hello, {answer.content.name if answer.content else answer.action}"


def mark(name: str) -> None:
    """Writes this process's pid to MARKS/name at once: a test that sees the file reads it whole."""
    partial = MARKS / f"{name}.partial"
    partial.write_text(str(os.getpid()))
    os.replace(partial, MARKS / name)


@app.tool(task="required")
async def wait(label: str) -> str:
    """Waits until cancelled; marks the cancellation in FLEET_MARKS."""
    mark(f"{label}.started")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        mark(f"{label}.cancelled")
        raise
    return "never"


@app.tool
def touch(uri: str) -> str:
    """Tells every replica's listeners that ``uri`` changed."""
    app.notify_resource_updated(uri)
    return "touched"


@app.resource("file:///shared.txt")
def shared() -> str:
    """A resource a listen stream can subscribe to."""
    return "shared"


@app.tool(task="optional")
async def square(n: int) -> dict[str, int | float | str]:
    """A task when the caller declares the extension, else an ordinary call (a float and a
    non-ASCII string: what a JSON round trip could write differently)."""
    return {"n": n, "square": n * n, "half": n / 2, "said": f"{n}² = {n * n}"}
