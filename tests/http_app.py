"""The app the HTTP tests serve (in-process and through ``mcpkit run``)."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from mcpkit import App, Context

app = App("http-test", version="1.0.0")

CANCELLED = threading.Event()
FINISHED = threading.Event()
STARTED = threading.Event()

REGION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "place": {
            "type": "object",
            "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
        },
        "note": {"type": "string"},
    },
}


@app.tool
def echo(text: str) -> str:
    """Answer the text."""
    return text


@app.tool
def pid() -> int:
    """The process id of the worker that answers."""
    return os.getpid()


@app.tool
async def chatty(ctx: Context) -> str:
    """Report progress three times and log once, then answer."""
    for step in range(1, 4):
        await ctx.report_progress(step, 3, f"step {step}")
    await ctx.info("done")
    return "finished"


@app.tool
async def slow(seconds: float) -> str:
    """Sleep, recording whether the sleep was cancelled."""
    STARTED.set()
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        CANCELLED.set()
        raise
    FINISHED.set()
    return "slept"


@app.tool
def whoami(ctx: Context) -> str:
    """The authenticated principal, as text."""
    return repr(ctx.principal)


def located(**arguments: Any) -> str:
    """Answer the arguments that mirror into headers."""
    return repr(sorted(arguments.items()))


app.add_tool(located, name="located", input_schema=REGION_SCHEMA)
