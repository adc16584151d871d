"""The faulty handlers of ``tests/test_faults.py``, served in process and by ``mcpkit run``.

Every fault that a tool's own code can raise comes as a sync and an async tool
(``<fault>_sync``, ``<fault>_async``); the results JSON cannot carry come as one tool each; a
resource, a prompt and the completion handler fail too. ``hold`` and ``block_*`` wait until
``release`` is called; ``seen`` tells which of them started, saw their cancellation or finished.
``make_app()`` builds a fresh app (its own gate and records).
"""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from gates import Gate

from mcpkit import App, Context, Text, ToolResult
from mcpkit.exceptions import InvalidParams, ToolError

SECRET = "secret detail 7f3a"
"""In every exception's text: no answer may carry it."""


class Boom(ValueError):
    """An ordinary exception subclass."""


class Custom(BaseException):
    """A BaseException subclass of the user's own."""


def _raise(kind: Callable[[str], BaseException], text: str = SECRET) -> Callable[[], Any]:
    def fault() -> Any:
        raise kind(text)

    return fault


RAISES: dict[str, Callable[[], Any]] = {
    "runtime_error": _raise(RuntimeError),
    "exception_subclass": _raise(Boom),
    "tool_error": _raise(ToolError, "the tool says no"),
    "protocol_error": _raise(InvalidParams, "Invalid params: the tool refuses"),
    "system_exit": lambda: sys.exit(3),
    "keyboard_interrupt": _raise(KeyboardInterrupt),
    "generator_exit": _raise(GeneratorExit),
    "custom_base_exception": _raise(Custom),
    "cancelled_error": _raise(asyncio.CancelledError),
}
"""Faults raised by a tool's own code."""


class Records:
    def __init__(self) -> None:
        self.gate = Gate()
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self.finished: list[str] = []


def make_app() -> App:
    app = App("faults", "1.0")
    records = Records()
    for name, fault in RAISES.items():
        _add_both(app, name, fault)
    _add_returns(app)
    _add_blocking(app, records)
    _add_noise(app)
    _add_other_handlers(app)
    return app


def _add_both(app: App, name: str, fault: Callable[[], Any]) -> None:
    def sync_tool() -> str:
        return str(fault())

    async def async_tool() -> str:
        return str(fault())

    app.add_tool(sync_tool, name=f"{name}_sync", description=f"{name}, in a worker thread")
    app.add_tool(async_tool, name=f"{name}_async", description=f"{name}, on the event loop")


def _add_returns(app: App) -> None:
    @app.tool
    def return_object() -> Any:
        """An object JSON has no form for."""
        return object()

    @app.tool
    def return_structured_object() -> ToolResult:
        """structuredContent holding an object."""
        return ToolResult(structured={"x": object()})

    @app.tool
    def return_meta_object() -> ToolResult:
        """_meta holding an object."""
        return ToolResult("text", meta={"x": object()})

    @app.tool
    def return_annotation_object() -> Text:
        """Content annotations holding an object."""
        return Text("text", annotations={"x": object()})

    @app.tool
    def return_nan() -> float:
        """Not a number."""
        return math.nan

    @app.tool
    def return_infinity() -> dict[str, float]:
        """Infinity inside structured content."""
        return {"v": math.inf}

    @app.tool
    def return_cyclic() -> dict[str, Any]:
        """A dict that holds itself."""
        cyclic: dict[str, Any] = {}
        cyclic["self"] = cyclic
        return cyclic

    @app.tool
    def return_lone_surrogate() -> str:
        """A string UTF-8 cannot encode."""
        return "\ud800"

    @app.tool
    def return_huge_int() -> int:
        """An integer of 5,001 digits (past what JSON parsers read by default)."""
        return 10**5000


def _add_blocking(app: App, records: Records) -> None:
    @app.tool
    async def hold() -> str:
        """Runs alongside a fault until released."""
        await records.gate.wait()
        return "held"

    @app.tool
    async def block_async(ctx: Context) -> str:
        """Waits until released, noting that it started and whether it was cancelled."""
        records.started.append("block_async")
        try:
            await ctx.report_progress(1)
            await records.gate.wait()
        except asyncio.CancelledError:
            records.cancelled.append("block_async")
            raise
        return "released"

    @app.tool
    def block_sync() -> str:
        """Holds a worker thread until released."""
        records.started.append("block_sync")
        records.gate.wait_here()
        records.finished.append("block_sync")
        return "released"

    @app.tool
    async def release() -> str:
        """Releases hold and the blocked tools."""
        records.gate.open()
        return "released"

    @app.tool
    def seen() -> dict[str, list[str]]:
        """Which blocking tools started, saw their cancellation, finished (sync)."""
        return {
            "started": list(records.started),
            "cancelled": list(records.cancelled),
            "finished": list(records.finished),
        }


def _add_noise(app: App) -> None:
    @app.tool
    def noisy() -> str:
        """Writes to stdout every way there is, and leaves a thread writing on."""
        print("print() from a tool")
        sys.stdout.write("sys.stdout.write from a tool\n")
        sys.stdout.flush()
        os.write(1, b"os.write(1) from a tool\n")
        subprocess.run([sys.executable, "-c", "print('a child process line')"], check=True)

        def chatter() -> None:
            for n in range(200):
                print(f"a thread's line {n}", flush=True)
                os.write(1, b"a thread's raw line\n")

        threading.Thread(target=chatter, daemon=True).start()
        return "printed"

    @app.tool
    async def nan_notes(ctx: Context) -> str:
        """Reports NaN progress and logs Infinity: notifications JSON cannot carry."""
        await ctx.report_progress(math.nan)
        await ctx.warning({"value": math.inf})
        return "noted"

    @app.tool
    def big(size: int, pad: str = "") -> str:
        """An answer of ``size`` bytes (``pad`` makes the request as large as wanted)."""
        return "x" * size


def _add_other_handlers(app: App) -> None:
    @app.resource("fault://resource/{kind}")
    def faulty_resource(kind: str) -> str:
        """Raises as asked."""
        raise SystemExit(3) if kind == "system_exit" else RuntimeError(SECRET)

    @app.prompt
    def faulty_prompt() -> str:
        """Raises."""
        raise RuntimeError(SECRET)

    @app.completion
    def complete(ref: dict[str, Any], argument: str, value: str, given: Any) -> list[str]:
        raise RuntimeError(SECRET)


app = make_app()
