"""The start-up floor: the small tool set answered over stdio by the standard library and asyncio.

What any asyncio MCP server must import and do before its first ``tools/list`` answer, and no
more: ``asyncio`` and ``json``, stdin read through the event loop, the small set's definitions
written by hand (the schemas mcpkit publishes for ``bench_tools.SMALL``; no pydantic, no schema
derivation, no SDK), ``add``/``add_async`` checked and answered by hand. mcpkit's start-up is
judged against it (``<= 1.3x``): the gap is mcpkit's own modules and work.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

INTS = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
INTS["required"] = ["a", "b"]
INT_RESULT = {
    "type": "object",
    "properties": {"result": {"type": "integer"}},
    "required": ["result"],
}
POINT = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
    "required": ["x", "y"],
}
SHAPE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "origin": POINT,
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "origin"],
}
DESCRIBE = {
    "type": "object",
    "properties": {
        "shape": SHAPE,
        "color": {"type": "string", "enum": ["red", "green", "blue"]},
        "mode": {"type": "string", "enum": ["fast", "exact"], "default": "fast"},
        "scale": {"type": "number"},
    },
    "required": ["shape", "color"],
}
STATS = {
    "type": "object",
    "properties": {"values": {"type": "array", "items": {"type": "number"}}},
    "required": ["values"],
}
TOOLS = [
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": INTS,
        "outputSchema": INT_RESULT,
    },
    {
        "name": "add_async",
        "description": "Add two integers (async).",
        "inputSchema": INTS,
        "outputSchema": INT_RESULT,
    },
    {"name": "describe", "description": "Describe a shape.", "inputSchema": DESCRIBE},
    {
        "name": "stats",
        "description": "Summary statistics of some values.",
        "inputSchema": STATS,
        "outputSchema": {"type": "object", "additionalProperties": {"type": "number"}},
    },
]


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor-stdlib", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call" and params.get("name") in ("add", "add_async"):
        args = params.get("arguments") or {}
        a, b = args.get("a"), args.get("b")
        if type(a) is not int or type(b) is not int or len(args) != 2:
            raise ValueError("a and b must be integers")
        text = json.dumps({"result": a + b}, separators=(",", ":"))
        content = [{"type": "text", "text": text}]
        return {"content": content, "structuredContent": {"result": a + b}, "isError": False}
    if method == "ping":
        return {}
    raise LookupError(method)


class Stdin(asyncio.Protocol):
    """Newline-delimited JSON-RPC in, one answer written per request."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        for line in lines:
            if line.strip():
                self.line(json.loads(line))

    def line(self, message: dict[str, Any]) -> None:
        if "id" not in message:
            return  # a notification
        reply: dict[str, Any]
        try:
            reply = {"result": answer(message["method"], message.get("params") or {})}
        except LookupError:
            reply = {"error": {"code": -32601, "message": "Method not found"}}
        except ValueError as exc:
            reply = {"error": {"code": -32602, "message": str(exc)}}
        data = json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}, separators=(",", ":"))
        sys.stdout.buffer.write(data.encode() + b"\n")
        sys.stdout.buffer.flush()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def serve() -> None:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    await loop.connect_read_pipe(lambda: Stdin(done), sys.stdin)
    await done


if __name__ == "__main__":
    asyncio.run(serve())
