"""The app the fuzz suites serve, in process and through ``mcpkit run tests/fuzz_app.py:app``.

Every tool, resource and prompt takes a ``tag`` (unique per fuzzed message) and counts its runs
under it, so a suite can tell how often each message ran. ``gate`` and ``gate_sync`` block until
the ``release`` tool is called; ``runs`` answers the counts; ``guarded`` needs a scope no fuzz
client holds, so a call to it must be answered as an unknown tool and never run.
``part_quick`` comes from an included app; ``needs_url`` runs, then asks for a URL elicitation
(``-32042``, an input request, or ``-32021`` for a client without ``elicitation.url``); a
tool linked to an MCP Apps view puts ``_meta.ui`` in every list.
``make_app()`` builds a fresh app (with its own counts and gates) for each in-process example.
Every request passes through a middleware (``relay``), so the suites' invariants (each id
answered once, no tool run twice, cancels honoured) hold with the middleware path in between.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from gates import Gate

from mcpkit import App, Call, Context, UrlElicitationRequired
from mcpkit.middleware import CallNext


class Recorder:
    """Runs per tag, and the gate the blocking tools wait behind."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.gate = Gate()
        self.listeners: list[Callable[[str], object]] = []  # told of each run (any thread)

    def ran(self, tag: str) -> None:
        with self.lock:
            self.runs[tag] += 1
        for listener in self.listeners:
            listener(tag)


def make_app() -> tuple[App, Recorder]:
    app = App("fuzz", "1.0", middleware=[relay])
    recorder = Recorder()
    _add_tools(app, recorder)
    _add_features(app, recorder)
    app.include(_part(recorder), prefix="part")
    return app, recorder


def _part(recorder: Recorder) -> App:
    """An included app: its tool is served as ``part_quick``."""
    part = App("part", "1.0")

    @part.tool
    async def quick(tag: str) -> str:
        recorder.ran(tag)
        return tag

    return part


async def relay(call: Call, call_next: CallNext) -> dict[str, Any]:
    """Passes every request on (with a rewrite of the params, to run that path too)."""
    return await call_next(call.replace(params=dict(call.params)))


def _add_tools(app: App, recorder: Recorder) -> None:
    @app.tool
    async def quick(tag: str, ctx: Context) -> str:
        """Answers at once, with a progress report and a log message on the way."""
        recorder.ran(tag)
        await ctx.report_progress(1, 1)
        await ctx.info(tag)
        return tag

    @app.tool(task="optional")
    async def quick_task(tag: str, ctx: Context) -> str:
        """A task when the request declares the tasks extension (it may end with the server)."""
        recorder.ran(tag)
        await ctx.report_progress(1, 1, message=tag)
        return tag

    @app.tool
    def quick_sync(tag: str) -> str:
        """Answers at once, from a worker thread."""
        recorder.ran(tag)
        return tag

    @app.tool
    async def echo(tag: str, value: Any = None) -> dict[str, Any]:
        """Answers what it was given."""
        recorder.ran(tag)
        return {"tag": tag, "value": value}

    @app.tool
    async def gate(tag: str) -> str:
        """Waits until released."""
        recorder.ran(tag)
        await recorder.gate.wait()
        return tag

    @app.tool
    def gate_sync(tag: str) -> str:
        """Holds a worker thread until released."""
        recorder.ran(tag)
        recorder.gate.wait_here()
        return tag

    @app.tool
    async def release() -> str:
        """Opens every gate."""
        recorder.gate.open()
        return "released"

    @app.tool(scopes=["fuzz:admin"])
    def guarded(tag: str) -> str:
        """Requires a scope no fuzz client holds: every call to it is an unknown tool."""
        recorder.ran(tag)
        return tag

    @app.tool
    def runs() -> dict[str, int]:
        """How often each tag ran."""
        with recorder.lock:
            return dict(recorder.runs)


def _add_features(app: App, recorder: Recorder) -> None:
    @app.resource("fuzz://static")
    def static() -> str:
        return "static"

    @app.resource("fuzz://item/{tag}")
    def item(tag: str) -> str:
        recorder.ran(tag)
        return tag

    @app.prompt
    def greet(tag: str) -> str:
        """Greets a tag."""
        recorder.ran(tag)
        return f"hello {tag}"

    @app.ui("ui://fuzz/board")
    def board() -> str:
        return "<p>board</p>"

    @app.tool(ui="ui://fuzz/board")
    def needs_url(tag: str) -> str:
        recorder.ran(tag)
        raise UrlElicitationRequired("https://example.com/consent", "Consent first")

    @app.completion
    def complete(ref: dict[str, Any], argument: str, value: str, given: Any) -> list[str]:
        return [value + "a", value + "b"]


app, recorder = make_app()
