"""OpenTelemetry in the tests: an SDK tracer provider that records into memory, the App the
tests trace, and finished spans as plain dicts to compare with literal ones."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from mcpkit import App, Context, ServerOptions, ToolError

ADD = {"name": "add", "arguments": {"a": 1, "b": 2}}  # the tools/call both suites send
CALL_ADD = {  # its span's attributes
    "mcp.method.name": "tools/call",
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "add",
}
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
CALLER = {"traceparent": TRACEPARENT, "tracestate": "congo=t61rcWkgMzE", "baggage": "user=alice"}


P = ParamSpec("P")


def synchronous(test: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """An async test run on a loop of its own (pytest still sees its fixtures)."""

    @functools.wraps(test)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


class Recorder:
    """A tracer provider whose spans end up in :attr:`exporter`."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def summaries(self) -> list[dict[str, Any]]:
        return [summary(span) for span in self.spans()]


def summary(span: ReadableSpan) -> dict[str, Any]:
    """What a span says: name, kind, attributes, status (when set) and events (when any)."""
    said: dict[str, Any] = {
        "name": span.name,
        "kind": span.kind.name,
        "attributes": dict(span.attributes or {}),
    }
    status = span.status
    if status.status_code is not StatusCode.UNSET:
        said["status"] = status.status_code.name
        if status.description is not None:
            said["status"] += f": {status.description}"
    if span.events:
        said["events"] = [{"name": e.name, **dict(e.attributes or {})} for e in span.events]
    return said


def hex_ids(span: ReadableSpan) -> tuple[str, str, str | None]:
    """``(trace id, span id, parent span id)`` in hex."""
    context = span.get_span_context()
    assert context is not None
    parent = None if span.parent is None else f"{span.parent.span_id:016x}"
    return f"{context.trace_id:032x}", f"{context.span_id:016x}", parent


def build(provider: Any = None) -> App:
    """A small App to trace: a tool that logs, one that fails, a prompt, a resource."""
    app = App("traced", "1.0.0", options=ServerOptions(tracer_provider=provider))

    @app.tool
    async def add(a: int, b: int, ctx: Context) -> int:
        """Add two integers."""
        await ctx.info("adding")
        await ctx.debug({"a": a, "b": b}, logger="math")
        return a + b

    @app.tool
    def fail() -> str:
        """Always fails."""
        raise ToolError("no luck")

    @app.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    @app.resource("notes://today")
    def today() -> str:
        """Today's note."""
        return "buy milk"

    return app
