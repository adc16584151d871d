"""FastMCP's server (``fastmcp`` 4.x, ``FastMCP``) with the benchmark's tools.

``python peer_fastmcp.py`` serves stdio; ``python peer_fastmcp.py --http PORT`` serves its
streamable-HTTP app in stateless JSON mode with uvicorn on 127.0.0.1 (no access log, log level
warning, like ``mcpkit run``). The driver sets ``FASTMCP_LOG_LEVEL=WARNING``,
``FASTMCP_SHOW_SERVER_BANNER=false`` and ``FASTMCP_CHECK_FOR_UPDATES=off``. ``BENCH_TOOLS``
picks the tool set (see ``bench_tools``). ``build`` is the in-process scenario: register the
functions, then the full ``tools/list`` definitions.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from bench_tools import tool_count, tool_functions
from fastmcp import FastMCP


def make_server(functions: list[Callable[..., Any]]) -> FastMCP:
    server = FastMCP("bench", version="1.0.0")
    for fn in functions:
        server.add_tool(fn)
    return server


def build(functions: list[Callable[..., Any]]) -> list[dict[str, Any]]:
    tools = asyncio.run(make_server(functions).list_tools())
    return [
        tool.to_mcp_tool().model_dump(mode="json", by_alias=True, exclude_none=True)
        for tool in tools
    ]


def serve_http(server: FastMCP, port: int) -> None:
    import uvicorn

    app = server.http_app(stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    bench = make_server(tool_functions(tool_count()))
    if sys.argv[1:2] == ["--http"]:
        serve_http(bench, int(sys.argv[2]))
    else:
        bench.run(show_banner=False)
