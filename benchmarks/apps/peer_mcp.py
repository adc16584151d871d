"""The official SDK's server (``mcp`` 2.3.0, ``MCPServer``) with the benchmark's tools.

``python peer_mcp.py`` serves stdio; ``python peer_mcp.py --http PORT`` serves its
streamable-HTTP app in stateless JSON mode with uvicorn on 127.0.0.1 (no access log, log level
warning, like ``mcpkit run``). ``BENCH_TOOLS`` picks the tool set (see ``bench_tools``).
``build`` is the in-process scenario: register the functions, then the full ``tools/list``
definitions. Runs in the peer's own virtual environment (``benchmarks/run.py --peers``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from bench_tools import tool_count, tool_functions
from mcp.server.mcpserver import MCPServer


def make_server(functions: list[Callable[..., Any]]) -> MCPServer:
    # log level WARNING: the same as mcpkit's default (the SDK's default is INFO).
    server: MCPServer = MCPServer("bench", version="1.0.0", log_level="WARNING")
    for fn in functions:
        server.add_tool(fn)
    return server


def build(functions: list[Callable[..., Any]]) -> list[dict[str, Any]]:
    tools = asyncio.run(make_server(functions).list_tools())
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


def serve_http(server: MCPServer, port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    bench = make_server(tool_functions(tool_count()))
    if sys.argv[1:2] == ["--http"]:
        serve_http(bench, int(sys.argv[2]))
    else:
        bench.run()
