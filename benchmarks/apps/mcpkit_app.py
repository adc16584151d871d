"""The benchmark's mcpkit server: ``mcpkit run benchmarks/apps/mcpkit_app.py:app``.

``BENCH_TOOLS`` picks the tool set (see ``bench_tools``); ``BENCH_MIDDLEWARE=1`` adds one
pass-through middleware (what one costs); ``BENCH_OTEL=sdk`` installs the OpenTelemetry SDK
with an in-memory exporter, so every request records a span (what tracing costs). ``build`` is
the in-process scenario: register the given functions, compile them and render the full
``tools/list`` definitions.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from bench_tools import tool_count, tool_functions

from mcpkit import App, Call
from mcpkit.middleware import CallNext


def make_app(functions: list[Callable[..., Any]]) -> App:
    app = App("bench", version="1.0.0")
    for fn in functions:
        app.add_tool(fn)
    return app


def build(functions: list[Callable[..., Any]]) -> list[dict[str, Any]]:
    app = make_app(functions)
    app.compile()
    return [tool.definition for tool in app.tools.values()]


async def passthrough(call: Call, call_next: CallNext) -> dict[str, Any]:
    return await call_next(call)


app = make_app(tool_functions(tool_count()))
if os.environ.get("BENCH_MIDDLEWARE") == "1":
    app.middleware(passthrough)
if os.environ.get("BENCH_OTEL") == "sdk":
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    trace.set_tracer_provider(provider)
