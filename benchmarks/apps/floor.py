"""The floor: a hand-written stdio JSON-RPC server with pydantic and nothing else.

At start it builds every tool's ``TypeAdapter`` and its JSON schema (and the return type's), as
any SDK must; then it answers ``initialize``, ``tools/list`` (paginated like mcpkit, 100 per
page) and ``tools/call`` (arguments validated by the function's adapter) with ``json`` and
``sys.stdout`` writes. No concurrency, no error mapping, no spec edge cases: the least an SDK
built on pydantic can do. ``build`` is the in-process scenario (bare pydantic). ``--http PORT``
serves the same answers through uvicorn with a bare ASGI app (the HTTP floor).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections.abc import Callable
from typing import Any

from bench_tools import tool_count, tool_functions
from pydantic import TypeAdapter

PAGE_SIZE = 100


class FloorTool:
    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.arguments: TypeAdapter[Any] = TypeAdapter(fn)  # type: ignore[arg-type]
        self.returns = TypeAdapter(fn.__annotations__.get("return", Any))
        output = self.returns.json_schema(mode="serialization")
        self.wrapped = output.get("type") != "object"
        if self.wrapped:
            output = {"type": "object", "properties": {"result": output}, "required": ["result"]}
        self.definition: dict[str, Any] = {
            "name": fn.__name__,
            "description": fn.__doc__ or "",
            "inputSchema": self.arguments.json_schema(),
            "outputSchema": output,
        }
        self.is_async = inspect.iscoroutinefunction(fn)


def build(functions: list[Callable[..., Any]]) -> list[dict[str, Any]]:
    return [FloorTool(fn).definition for fn in functions]


class Floor:
    def __init__(self, tools: list[FloorTool]) -> None:
        self.tools = {tool.definition["name"]: tool for tool in tools}
        self.listing = [tool.definition for tool in tools]
        self.loop = asyncio.new_event_loop()

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "1.0.0"},
            }
        if method == "tools/list":
            start = int(params.get("cursor") or 0)
            result: dict[str, Any] = {"tools": self.listing[start : start + PAGE_SIZE]}
            if start + PAGE_SIZE < len(self.listing):
                result["nextCursor"] = str(start + PAGE_SIZE)
            return result
        if method == "tools/call":
            return self.call(params["name"], params.get("arguments") or {})
        if method == "ping":
            return {}
        raise LookupError(method)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tool = self.tools[name]
        value = tool.arguments.validate_python(arguments)
        if tool.is_async:
            value = self.loop.run_until_complete(value)
        return self.result(tool, value)

    async def call_async(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``call`` inside a running loop (HTTP); sync tools run inline, as over stdio."""
        tool = self.tools[name]
        value = tool.arguments.validate_python(arguments)
        if tool.is_async:
            value = await value
        return self.result(tool, value)

    def result(self, tool: FloorTool, value: Any) -> dict[str, Any]:
        data = tool.returns.dump_python(value, mode="json")
        structured = {"result": data} if tool.wrapped else data
        text = json.dumps(structured, separators=(",", ":"))
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": False,
        }


def serve(floor: Floor) -> None:
    out = sys.stdout
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        reply: dict[str, Any]
        try:
            reply = {"result": floor.answer(message["method"], message.get("params") or {})}
        except LookupError:
            reply = {"error": {"code": -32601, "message": "Method not found"}}
        except Exception as exc:
            reply = {"error": {"code": -32603, "message": str(exc)}}
        reply = {"jsonrpc": "2.0", "id": message["id"], **reply}
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


def serve_http(floor: Floor, port: int, http: str = "auto") -> None:
    """The HTTP floor: uvicorn (as every SDK here uses it) with :func:`asgi_app`; ``http``,
    uvicorn's protocol (``"auto"``: h11 here) or the name of another (mcpkit's)."""
    import uvicorn

    app = asgi_app(floor)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, http=http)


def asgi_app(floor: Floor) -> Callable[..., Any]:
    """A bare ASGI app that answers each POSTed JSON-RPC message with a JSON body: no headers
    checked, no sessions, no SSE."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
        message = json.loads(body)
        params = message.get("params") or {}
        reply: dict[str, Any]
        try:
            if message["method"] == "tools/call":
                result = await floor.call_async(params["name"], params.get("arguments") or {})
            else:
                result = floor.answer(message["method"], params)
            reply = {"result": result}
        except LookupError:
            reply = {"error": {"code": -32601, "message": "Method not found"}}
        except Exception as exc:
            reply = {"error": {"code": -32603, "message": str(exc)}}
        data = json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    return app


if __name__ == "__main__":
    floor = Floor([FloorTool(fn) for fn in tool_functions(tool_count())])
    if sys.argv[1:2] == ["--http"]:
        serve_http(floor, int(sys.argv[2]))
    elif sys.argv[1:2] == ["--http-mcpkit"]:  # mcpkit's HTTP/1.1 protocol, as `mcpkit run`'s
        serve_http(floor, int(sys.argv[2]), "mcpkit.transports.http._h1:http_protocol")
    else:
        serve(floor)
