"""The benchmark's mcpkit server: ``mcpkit run benchmarks/apps/mcpkit_app.py:app``.

``BENCH_TOOLS`` picks the tool set (see ``bench_tools``). ``build`` is the in-process scenario:
register the given functions, compile them and render the full ``tools/list`` definitions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_tools import tool_count, tool_functions

from mcpkit import App


def make_app(functions: list[Callable[..., Any]]) -> App:
    app = App("bench", version="1.0.0")
    for fn in functions:
        app.add_tool(fn)
    return app


def build(functions: list[Callable[..., Any]]) -> list[dict[str, Any]]:
    app = make_app(functions)
    app.compile()
    return [tool.definition for tool in app.tools.values()]


app = make_app(tool_functions(tool_count()))
